#!/usr/bin/env bash
# bench/report.sh — mediactl report against mediactl scan with the store, same run.
#
# 1. Generates (once, cached in $BENCH_DIR) the dense forge-style tree of
#    bench/scan.sh: $DENSE_SIZE (default 640MB) of short messages, each naming
#    a blob, with the 200,000 blobs they name in .forge/files/inbound (the
#    same tree scan.sh times, so the two share a cache).
# 2. Times, in the same hyperfine run and with the tree in page cache:
#      mediactl scan   -q --layout forge --root TREE   (every reference resolved, each key stat'ed)
#      mediactl report -q --layout forge --root TREE   (the same scan, plus the store's listing, the
#                                                      retention marks, the owner attribution and
#                                                      every aggregate; the HTML page with --html)
#    and reports the ratio (target: report <= 1.2 x scan). RUNS (default 5)
#    runs each; OLD=path/to/an/older/mediactl times that binary's scan beside.
#
# Needs: go, hyperfine (apt-get install -y hyperfine).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
DENSE_SIZE=${DENSE_SIZE:-640MB}
BLOBS=${BLOBS:-200000}
RUNS=${RUNS:-5}
command -v hyperfine >/dev/null || { echo "bench/report.sh: hyperfine missing: apt-get install -y hyperfine" >&2; exit 2; }
mkdir -p "$BENCH_DIR" bench/out
bin="$BENCH_DIR/mediactl"
go build -o "$bin" ./cmd/mediactl

tree="$BENCH_DIR/scan-dense-$DENSE_SIZE"
if [ ! -f "$tree/.done" ]; then
  rm -rf "$tree"
  go run ./bench/gensessions -dir "$tree" -size "$DENSE_SIZE" -distinct "$BLOBS" -blobs "$BLOBS" -prose 60
  touch "$tree/.done"
fi
cat "$tree"/.forge/sessions/* >/dev/null # page cache
ls -l "$tree/.forge/files/inbound" >/dev/null

out=bench/out/report-dense.json
html="$BENCH_DIR/report.html"
# -i: the dense tree's sessions name blobs that may be missing (exit 1).
hyperfine -N -i -w 1 -r "$RUNS" --export-json "$out" \
  -n scan "$bin scan -q --no-progress --layout forge --root $tree" \
  -n report "$bin report -q --no-progress --layout forge --root $tree" \
  -n report-html "$bin report -q --no-progress --layout forge --root $tree --html $html" >/dev/null

python3 - "$out" "$(nproc)" "$tree" <<'PY'
import json, os, sys
out, cpus, tree = sys.argv[1:]
r = {x["command"]: x for x in json.load(open(out))["results"]}
d = os.path.join(tree, ".forge", "sessions")
b = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
n = len(os.listdir(os.path.join(tree, ".forge", "files", "inbound")))
print(f"report benchmark ({cpus} CPUs): {b/2**20:.0f} MiB of sessions, {n} blobs, in page cache; median of runs (min-max)")
scan = r["scan"]["median"]
for name in ("scan", "report", "report-html"):
    x = r[name]
    print(f"  {name:12s} {x['median']:7.3f} s  ({x['min']:.3f}-{x['max']:.3f})  user+sys {x['user']+x['system']:.2f} s   ratio/scan {x['median']/scan:.2f}")
print(f"  ratio report/scan {r['report']['median']/scan:.2f} (target <= 1.2)")
PY
