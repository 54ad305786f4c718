#!/bin/bash
# t0595-html: `sweep report --format html` (or --out FILE.html) writes one self-contained page, opened here
# in a real browser (chromium, headless, names unresolvable): every row and value of the table with its marks
# and footnote, the figure inline with the numbers behind it, the method and the conditions, and no request
# leaving the page (its Content-Security-Policy forbids one; a planted image proves that both checks see it).
. tests/e2e/lib.sh
export SWEEP

# The browser is Debian's chromium, which `make deps` installs (tools/deps.sh); a chromium that cannot render
# a page headless here (no user namespaces, no shared memory) counts as missing.
chromium_renders() {
	echo '<p id="probe">x</p>' >"$T/probe.html" &&
		timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
			--user-data-dir="$T/chromium-probe" --dump-dom "file://$T/probe.html" 2>"$T/probe.err" |
		grep -q 'id="probe"'
}
test_needs "chromium" command -v chromium
test_needs "a chromium that renders a page headless" chromium_renders

# browse PAGE NAME: the DOM chromium renders of PAGE into NAME.dom, its console into NAME.err and its
# network log into NAME.net
browse() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
		--host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$T/chromium" --enable-logging=stderr \
		--log-net-log="$T/$2.net" --dump-dom "file://$T/$1" >"$2.dom" 2>"$2.err"
}

# page_requests NAME: the URLs the page itself asked for (the browser's own update checks are not the
# page's: those requests have no file:// isolation key)
page_requests() {
	python3 - "$1.net" <<'EOF'
import json, sys
for e in json.load(open(sys.argv[1]))["events"]:
    p = e.get("params", {})
    if "url" in p and "file://" in p.get("network_isolation_key", "") and not p["url"].startswith("file:"):
        print(p["url"])
EOF
}

# The page's sections as text: python3 dom.py DOM prints "table|cell|cell..." per row of each table, the
# paragraphs of the table section, the notes, the figures and the figure data lines.
cat >"$T/dom.py" <<'EOF'
import sys
from html.parser import HTMLParser

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.section, self.rows, self.row, self.cell, self.par = None, [], None, None, None
        self.out, self.svg, self.data, self.in_pre = [], 0, "", False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.section = a.get("id")
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = ""
        elif tag == "p" and self.section == "table":
            self.par = ""
        elif tag == "svg" and self.section == "figures":
            self.svg += 1
        elif tag == "pre" and a.get("class") == "figure-data":
            self.in_pre = True
        elif tag == "li" and self.section == "notes":
            self.par = ""
    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.row is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == "tr":
            self.out.append("%s|%s" % (self.section, "|".join(self.row)))
            self.row = None
        elif tag == "p" and self.par is not None:
            self.out.append("%s-p|%s" % (self.section, self.par.strip()))
            self.par = None
        elif tag == "li" and self.par is not None:
            self.out.append("%s|%s" % (self.section, self.par.strip()))
            self.par = None
        elif tag == "pre":
            self.in_pre = False
    def handle_data(self, d):
        if self.cell is not None:
            self.cell += d
        if self.par is not None:
            self.par += d
        if self.in_pre:
            self.data += d

p = Page()
p.feed(open(sys.argv[1]).read())
print("\n".join(p.out))
print("svg|%d" % p.svg)
for line in p.data.splitlines():
    if line and line[0].isdigit():
        print("data|" + line)
EOF

# md_rows MD: "table|cell|cell..." per row of a Markdown table (the separator line left out), and the
# caption and footnote as "table-p|text"
md_rows() {
	awk '/^\| *:?-/ { next } /^\|/ { sub(/^\| /, ""); sub(/ \|$/, ""); n = split($0, c, / \| /); s = "table"
		for (i = 1; i <= n; i++) { gsub(/^ +| +$/, "", c[i]); s = s "|" c[i] } print s; next }
		/^(† |‡ )/ || (NR == 1 && NF) { print "table-p|" $0 }' "$1"
}

test_expect_success 'setup: the decode grid, one result short of its precision' '
	"$ROOT/examples/decode-grid.sh" "$T/dg.db" >/dev/null 2>&1 &&
	sql dg.db "UPDATE results SET precise = 0 WHERE id = (SELECT min(r.id) FROM v_results r
		WHERE r.host = '\''node-a'\'' AND json_extract(r.params, '\''$.system'\'') = '\''cache'\'')"
'

test_expect_success 'a page by extension: self-contained, the table as Markdown prints it, marks and footnote' '
	"$SWEEP" report dg.db --rows host,model,budget --metric tok_s --compare system=cache/baseline \
		--out page.html >out 2>err &&
	test ! -s out &&
	grep -q "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src '\''none'\''; img-src data:; style-src '\''unsafe-inline'\''\">" page.html &&
	! grep -v "xmlns" page.html | grep -qi "https\?://\|<script\|<link\|src=" &&
	"$SWEEP" report dg.db --rows host,model,budget --metric tok_s --compare system=cache/baseline >md &&
	md_rows md >want && grep -q "^table-p|† holds medians not known to the precision asked" want &&
	test "$(grep -c "^table|node-" want)" = 12 && grep -q "^table|node-a|.*†" want &&
	browse page.html page &&
	python3 dom.py page.dom >got &&
	grep "^table" got >got.table && cmp want got.table
'

test_expect_success 'the figure is there, inline, with the numbers the table prints for programs' '
	test "$(grep "^svg|" got)" = "svg|1" &&
	"$SWEEP" plot dg.db --rows host,model,budget --y tok_s --compare system=cache/baseline --out g.svg >/dev/null &&
	grep "^[0-9]" g.dat | sed "s/^/data|/" >want.data &&
	grep "^data|" got | cmp want.data - &&
	test "$(grep -c "^data|" got)" = 12 &&
	grep -q "node-b qwen-14b 4096" page.dom && grep -q "<svg" page.dom
'

test_expect_success 'the method and the conditions the numbers were measured under' '
	grep -qx "method|statistic|each unit'\''s mean over passes, then the ratio of the means of the paired units" got &&
	grep -qx "method|interval|95% percentile bootstrap of the ratio of means, resampling paired units (item)" got &&
	grep -qx "method|resamples|10000" got && grep -qx "method|seed|1" got &&
	# the blocks report --conditions prints: what every number shares, then the results of each row and what varies
	grep -qx "conditions|condition|value" got &&
	grep -qx "conditions|sweep_version|$("$SWEEP" --version | sed -n "s/^sweep \([^ ]*\).*/\1/p")" got &&
	grep -qx "conditions|cores|$(nproc)" got && grep -q "^conditions|os|" got &&
	grep -q "^conditions|file ../examples/decode_sim.py|sha256:[0-9a-f]*$" got &&
	grep -q "^conditions|host|model|budget|results|" got &&
	test "$(grep -c "^conditions|node-[ab]|" got)" = 12 &&
	"$SWEEP" report dg.db --rows host,model,budget --metric tok_s --conditions --format csv >cond.csv &&
	grep -q "^cores,$(nproc)$" cond.csv
'

test_expect_success 'nothing leaves the page; a planted image is seen by both checks' '
	page_requests page >req && test ! -s req && ! grep -q "Content Security Policy" page.err &&
	sed "s|</h1>|</h1><img src=\"http://192.0.2.1/x.png\">|" page.html >csp.html &&
	browse csp.html csp && grep -q "Content Security Policy" csp.err && page_requests csp >req && test ! -s req &&
	sed "/Content-Security-Policy/d" csp.html >open.html &&
	browse open.html open && page_requests open >req && test "$(cat req)" = "http://192.0.2.1/x.png"
'

test_expect_success 'shares of a limit: rows, summary and the band figure; --format html to stdout' '
	"$ROOT/examples/roofline.sh" "$T/rl.db" >/dev/null 2>&1 &&
	"$SWEEP" report rl.db --rows host,model --metric tok_s --limit "host_read_gbs * 1e9 / bytes_per_token" \
		--summary=label.class --format html >rl.html 2>rl.stderr &&
	"$SWEEP" report rl.db --rows host,model --metric tok_s --limit "host_read_gbs * 1e9 / bytes_per_token" \
		--summary=label.class >rl.md &&
	browse rl.html rl && python3 dom.py rl.dom >rl.got &&
	md_rows rl.md >rl.want && test "$(grep -c "^table|" rl.want)" = 30 &&
	grep -q "^table-p|‡ a summary'\''s interval rests on fewer than 5 units" rl.want &&
	grep "^table" rl.got | cmp rl.want - &&
	# the warnings the footnote points to are on the page, as stderr says them
	sed "s/^sweep: //; s/^/notes|/" rl.stderr >rl.notes && grep -q "^notes|warning: the summary of '\''consumer'\''" rl.notes &&
	test "$(wc -l <rl.notes)" = 2 && grep "^notes|" rl.got | cmp rl.notes - &&
	test "$(grep "^svg|" rl.got)" = "svg|1" && grep -qP "^data\|.*\tconsumer\t" rl.got &&
	grep -qx "method|summary interval|95% Student t interval of the mean over units: one value per host, the mean of its rows" rl.got &&
	page_requests rl >req && test ! -s req
'

test_expect_success 'the figure draws what the table prints: units of sweep plot, zero, marks; the caption once' '
	cat >cp.yaml <<-\EOF &&
	sweep: cp
	kernel: cpu.copy
	params: {bytes: [16K, 64K]}
	timing: {max_samples: 30, min_time: 0, max_noise: 1, timeout: 5}
	EOF
	"$SWEEP" run cp.yaml --db cp.db 2>/dev/null &&
	sql cp.db "UPDATE results SET precise = (id <> (SELECT min(id) FROM results))" &&
	"$SWEEP" report cp.db --rows bytes --metric gbs --out cp.html 2>/dev/null &&
	browse cp.html cp && python3 dom.py cp.dom >cp.got &&
	grep -qx "table|16384|1|[0-9.]*†" cp.got &&
	# rows in binary prefixes as sweep plot labels sizes, the marked one so; the value axis with its unit,
	# from 0; the marked value ringed, the ring named by the footnote
	sed -n "/<svg/,/<\/svg>/p" cp.html >cp.svg &&
	grep -q "<text>16 KiB †</text>" cp.svg && grep -q "<text>64 KiB</text>" cp.svg && ! grep -q ">16384<" cp.svg &&
	grep -q "<text>gbs (GB/s), median over passes</text>" cp.svg && grep -q "<text> 0</text>" cp.svg &&
	grep -q "<text>† holds medians not known to the precision asked</text>" cp.svg &&
	test "$(grep -c "xlink:href=.#gpPt5. transform=.*color=.rgb(  0,   0,   0)" cp.svg)" = 2 &&
	python3 "$ROOT/tests/figure_geometry.py" cp.svg >cp.geo &&
	# seconds in the unit that suits them, as sweep plot draws them: no tick at 0.0001
	"$SWEEP" report cp.db --rows bytes --metric seconds --out cs.html 2>/dev/null &&
	sed -n "/<svg/,/<\/svg>/p" cs.html >cs.svg &&
	grep -Eq "<text>seconds \((ms|µs|ns)\), median over passes</text>" cs.svg && ! grep -q "<text> 0\.0" cs.svg &&
	grep -q "<text> [1-9][0-9]*</text>" cs.svg &&
	# the caption once, above the table; no condition without a value
	test "$(grep -o "median of gbs over passes, sweep cp" cp.html | wc -l)" = 1 &&
	grep -q "^conditions|cores|" cp.got && ! grep -q "^conditions|[^|]*|$" cp.got
'

test_expect_success 'a drift page: the control ratio of each worker over its runs, over the band of the stable' '
	cat >ctl.sh <<-\EOF &&
	d=$(dirname "$0")/ctlstate; mkdir -p "$d"
	ms=$1
	if [ "$SIM_HOST" = drifty ] && [ "$ms" = 300 ]; then
		n=$(cat "$d/n" 2>/dev/null || echo 0); echo $((n + 1)) >"$d/n"; ms=$((300 + 120 * n))
	fi
	sleep "$(echo "$ms" | awk "{ printf \"%.3f\", \$1 / 1000 }")"
	echo "{\"t\": $1}"
	EOF
	printf "sweep: ctl\ncommand: [sh, %s/ctl.sh, \"{ms}\"]\nmetrics: json\nparams: {ms: [1, 2, 3, 4, 5, 6]}\nper: host\n%s\n" \
		"$T" "control: {params: {ms: 300}, every: 2}" >ctl.yaml &&
	"$ROOT/examples/simulate-hosts.sh" d.db ctl.yaml steady 2>/dev/null &&
	"$ROOT/examples/simulate-hosts.sh" d.db ctl.yaml drifty 2>/dev/null &&
	"$SWEEP" report d.db --drift --threshold 25 --out d.html 2>/dev/null &&
	"$SWEEP" report d.db --drift --threshold 25 --format csv >d.csv &&
	browse d.html d && python3 dom.py d.dom >d.got &&
	test "$(grep "^svg|" d.got)" = "svg|1" &&
	# the points drawn are the ratios the table prints, a worker a line, in the order of the table
	tail -n +2 d.csv | cut -d, -f7 |
		awk "{ for (i = 1; i <= NF; i++) printf \"data|%d\t%s\n\", i, \$i }" >want.data &&
	test "$(wc -l <want.data)" -ge 6 && grep "^data|" d.got | cmp want.data - &&
	grep -q "# drifty, run [0-9]*, worker 0$" d.html && grep -q "# steady, run [0-9]*, worker 0$" d.html &&
	sed -n "/<svg/,/<\/svg>/p" d.html >d.svg &&
	grep -q "<text>drifty, run [0-9]*, worker 0: UNSTABLE: drift [0-9.]*% > 25%</text>" d.svg &&
	grep -q "<text>steady, run [0-9]*, worker 0: stable</text>" d.svg &&
	grep -q "<text>stable: within 25% of 1</text>" d.svg &&
	python3 "$ROOT/tests/figure_geometry.py" d.svg >d.geo
'

# a sweep whose value is 10 M, two passes, for predictions to score
cat >"$T/pr.yaml" <<'EOF'
sweep: pr
command: [sh, -c, 'echo "{\"v\": $(({M} * 10))}"']
metrics: json
params:
  M: [1, 2, 3]
repeat: 2
EOF

test_expect_success 'a score page: each prediction against its measure, over the line of agreement and the bar' '
	printf "sweep,M,metric,value\npr,1,v,10\npr,2,v,2.5e1\n" >pred.csv &&
	"$SWEEP" plan pr.yaml --db pr.db >/dev/null && "$SWEEP" predict pr.db pred.csv >/dev/null &&
	"$SWEEP" run pr.yaml --db pr.db 2>/dev/null &&
	key=$(sql pr.db "SELECT key FROM cells WHERE json_extract(params, '\''$.M'\'') = 3 ORDER BY pass LIMIT 1") &&
	printf "key,metric,value\n%s,v,24\n" "$key" >late.csv && "$SWEEP" predict pr.db late.csv --late >/dev/null &&
	test_expect_code 4 "$SWEEP" report pr.db --score --bar 15 --out s.html 2>/dev/null &&
	browse s.html s && python3 dom.py s.dom >s.got &&
	grep -qx "table|v|blind|4|14.1|-10.0|met" s.got && grep -qx "table|v|late|1|25.0|25.0|missed" s.got &&
	test "$(grep "^svg|" s.got)" = "svg|1" &&
	# blind: M = 1 predicted 10, measured 10; M = 2 predicted 25, measured 20 (two passes each); late: 24, 30
	printf "data|10\t10\ndata|10\t10\ndata|25\t20\ndata|25\t20\ndata|24\t30\n" >want.s &&
	grep "^data|" s.got | cmp want.s - &&
	sed -n "/<svg/,/<\/svg>/p" s.html >s.svg &&
	grep -q "<text>v, blind predictions</text>" s.svg && grep -q "<text>v, late predictions</text>" s.svg &&
	grep -q "<text>measured = predicted</text>" s.svg &&
	grep -q "<text>within the bar: 15% of the prediction (the table holds the rms error to it)</text>" s.svg &&
	python3 "$ROOT/tests/figure_geometry.py" s.svg >s.geo &&
	grep -q "the numbers are of the metrics predicted" s.html
'

test_expect_success 'sweep compare makes no page: --format html and .html are refused, nothing written' '
	test_expect_code 2 "$SWEEP" compare dg.db dg.db --metric tok_s --format html >out 2>err &&
	grep -qx "sweep: sweep compare prints md, text, csv, latex or json, not a page (html); '\''sweep report --format html'\'' makes one" err &&
	test ! -s out &&
	test_expect_code 2 "$SWEEP" compare dg.db dg.db --metric tok_s --out cmp.html 2>err &&
	test ! -e cmp.html
'

test_expect_success '--conditions adds tables after a table: a page, which has its own section, refuses it' '
	test_expect_code 2 "$SWEEP" report dg.db --rows host --metric tok_s --conditions --out c.html 2>err &&
	grep -qx "sweep: --conditions goes with md, text, csv, latex or json: the page (html) has its conditions section" err &&
	test ! -e c.html
'
