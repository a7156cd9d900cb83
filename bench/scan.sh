#!/usr/bin/env bash
# bench/scan.sh — mediactl scan against ripgrep over the same forge-style session tree.
#
# 1. Generates (once, cached in $BENCH_DIR) a session tree of $SIZE (default 1 GiB).
# 2. Times, in the same run and with the tree in page cache:
#      mediactl scan --sessions TREE           (full JSON parse, references with places)
#      rg -o '[0-9a-f]{64}' TREE                (ripgrep's regex over the same bytes)
#    and reports the ratio (target: mediactl/rg <= 2.0).
# 3. Generates a tree holding 1,000,000 distinct references and reports mediactl's peak
#    RSS scanning it (target: <= 200 MiB), from /usr/bin/time -v.
#
# Needs: go, rg, hyperfine, /usr/bin/time (apt-get install -y ripgrep hyperfine time).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
SIZE=${SIZE:-1GiB}
RUNS=${RUNS:-5}
for tool in rg hyperfine /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench/scan.sh: $tool missing: apt-get install -y ripgrep hyperfine time" >&2; exit 2; }
done
mkdir -p "$BENCH_DIR" bench/out
bin="$BENCH_DIR/mediactl"
go build -o "$bin" ./cmd/mediactl

tree="$BENCH_DIR/scan-$SIZE"
if [ ! -f "$tree/.done" ]; then
  rm -rf "$tree"
  go run ./bench/gensessions -dir "$tree" -size "$SIZE" -distinct 400000 -blobs 0
  touch "$tree/.done"
fi
sessions="$tree/.forge/sessions"
bytes=$(du -sb "$sessions" | cut -f1)
cat "$sessions"/* >/dev/null # page cache

out=bench/out/scan.json
hyperfine -N -w 1 -r "$RUNS" --export-json "$out" \
  -n mediactl "$bin scan -q --no-progress --sessions $sessions" \
  -n rg "rg -o [0-9a-f]{64} $sessions" >/dev/null
read -r m_mean r_mean < <(python3 -c '
import json,sys
r={x["command"]:x for x in json.load(open(sys.argv[1]))["results"]}
print(r["mediactl"]["median"], r["rg"]["median"])' "$out")

refs=$("$bin" scan --no-progress --sessions "$sessions" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["references"])')
rgcount=$(rg -o '[0-9a-f]{64}' "$sessions" | wc -l)

rss_tree="$BENCH_DIR/scan-1m-refs"
if [ ! -f "$rss_tree/.done" ]; then
  rm -rf "$rss_tree"
  go run ./bench/gensessions -dir "$rss_tree" -size 700MiB -distinct 1000000 -prose 60 -blobs 0
  touch "$rss_tree/.done"
fi
/usr/bin/time -v "$bin" scan --no-progress --sessions "$rss_tree/.forge/sessions" -o json \
  > "$BENCH_DIR/rss.json" 2> "$BENCH_DIR/rss.time"
rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$BENCH_DIR/rss.time")
distinct=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["distinct_blobs"])' "$BENCH_DIR/rss.json")

python3 - "$bytes" "$m_mean" "$r_mean" "$refs" "$rgcount" "$rss_kb" "$distinct" "$(nproc)" <<'PY'
import sys
b, m, r, refs, rgc, rss, distinct, cpus = sys.argv[1:]
b, m, r, rss = int(b), float(m), float(r), int(rss)
print(f"scan benchmark ({cpus} CPUs), session tree {b/2**30:.2f} GiB in page cache, median of runs")
print(f"  mediactl scan      {m:7.3f} s   {b/m/1e6:7.0f} MB/s   {refs} references (with places)")
print(f"  rg -o '[0-9a-f]{{64}}' {r:7.3f} s   {b/r/1e6:7.0f} MB/s   {rgc} hex matches")
print(f"  ratio mediactl/rg  {m/r:.2f}   (target <= 2.0)")
print(f"  peak RSS, {distinct} distinct references: {rss/1024:.0f} MiB (target <= 200 MiB)")
PY
