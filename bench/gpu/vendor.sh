#!/bin/sh
# vendor.sh: gather into vendor/ (ignored) the headers and libraries the H200 machine lacks, copied from
# this machine, so that they can be copied there with the checkout: sqlite3.h (the library is there), yaml.h and libyaml,
# cblas.h and OpenBLAS with its Fortran runtime, jansson, PCRE2, OpenSSL's headers and libcrypto, and the
# toolkit's CUPTI headers (a toolkit installed without CUPTI has none; src/counters_cupti.cu needs them). Links
# named for -lyaml and -lopenblas point at the copies. vendor/ is in .gitignore.
set -eu
cd "$(dirname "$0")/../.."
rm -rf vendor
mkdir -p vendor/include vendor/lib
for h in sqlite3.h yaml.h cblas.h openblas_config.h jansson.h jansson_config.h pcre2.h; do
	for d in /usr/include /usr/include/x86_64-linux-gnu; do
		if [ -e "$d/$h" ]; then
			cp -L "$d/$h" vendor/include/
			break
		fi
	done
	[ -e "vendor/include/$h" ] || { echo "vendor: no $h here" >&2; exit 1; }
done
cuda=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
cp -L "$cuda"/include/cupti*.h vendor/include/ || { echo "vendor: no CUPTI headers in $cuda/include" >&2; exit 1; }
mkdir -p vendor/include/openssl
cp -L /usr/include/openssl/*.h /usr/include/x86_64-linux-gnu/openssl/*.h vendor/include/openssl/
for l in libyaml-0.so.2 libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libjansson.so.4 libcrypto.so.3 libpcre2-8.so.0; do
	p=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ { print $NF; exit }')
	[ -n "$p" ] || { echo "vendor: no $l here" >&2; exit 1; }
	cp -L "$p" "vendor/lib/$l"
done
ln -s libyaml-0.so.2 vendor/lib/libyaml.so
ln -s libopenblas.so.0 vendor/lib/libopenblas.so
ln -s libjansson.so.4 vendor/lib/libjansson.so
ln -s libcrypto.so.3 vendor/lib/libcrypto.so
ln -s libpcre2-8.so.0 vendor/lib/libpcre2-8.so
du -sh vendor
