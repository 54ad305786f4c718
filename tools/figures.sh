#!/bin/sh
# tools/figures.sh [DIR]: every kind of figure sweep draws, and the page of the README's tour, into DIR
# (docs/figures by default; `make figures`), from the simulated decode grid and roofline of examples/,
# whose numbers are the same on every machine. Each figure is NAME.png with the NAME.dat and NAME.gp it was
# drawn from; the page is page.png (a screenshot, when chromium is installed) and page.dat, the numbers
# its figure draws. tests/e2e/t0557-docs-figures.sh draws them again and compares the .dat and .gp files, so
# that the pictures in the docs show what the current code draws.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
SWEEP=${SWEEP:-$root/build/sweep}
export SWEEP
dir=${1:-docs/figures}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/sweep-figures.XXXXXX")
trap 'rm -rf "$work"' EXIT

examples/decode-grid.sh "$work/decode-grid.db" >/dev/null 2>&1
examples/roofline.sh "$work/roofline.db" >/dev/null 2>&1

# the figures are drawn in DIR, so that their scripts name their files without a folder
cd "$dir"
plot() {
	name=$1
	shift
	"$SWEEP" plot "$@" --out "$name.png" >/dev/null 2>&1
}
plot lines "$work/decode-grid.db" --x budget --y tok_s --series system --pool host,model --logx
plot lines-noerr "$work/decode-grid.db" --x budget --y tok_s --series system --pool host,model --logx --errors none
plot facets "$work/decode-grid.db" --x budget --y tok_s --series system --facet model --pool host --logx
plot compare "$work/decode-grid.db" --rows model,budget --y tok_s --compare system=cache/baseline
plot limit "$work/roofline.db" --rows host,model --y tok_s --limit 'host_read_gbs * 1e9 / bytes_per_token' \
	--summary=label.class

# the page of the tour: the numbers its figure draws, and what a reader sees of it
(cd "$work" && "$SWEEP" report decode-grid.db --rows model,budget --metric tok_s --compare system=cache/baseline \
	--out page.html >/dev/null 2>&1)
sed -n '/<pre class="figure-data">/,/<\/pre>/p' "$work/page.html" |
	sed 's/.*<pre class="figure-data">//; s/<\/pre>.*//' >page.dat
if command -v chromium >/dev/null 2>&1; then
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
		--host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$work/chromium" --hide-scrollbars \
		--window-size=1000,1400 --screenshot="$dir/page.png" "file://$work/page.html" >/dev/null 2>&1
fi
echo "wrote $(ls "$dir" | tr '\n' ' ')in $dir"
