#!/usr/bin/env bash
# bench/scan.sh — mediactl scan against ripgrep over the same forge-style session trees.
#
# 1. Generates (once, cached in $BENCH_DIR) two session trees:
#      sparse: $SIZE (default 1 GiB) of mostly prose, 400,000 distinct references;
#      dense:  $DENSE_SIZE (default 640MB) of short messages, each naming a blob
#              (-prose 60: about 0.9 million references, 1.5 per KiB), with the
#              200,000 blobs they name in .forge/files/inbound.
# 2. Times, in the same run and with each tree in page cache:
#      mediactl scan --sessions TREE           (full JSON parse, references with places)
#      rg -o '[0-9a-f]{64}' TREE                (ripgrep's regex over the same bytes)
#    and reports the ratios (targets: sparse <= 1.3, dense <= 1.0). On the dense
#    tree it also times mediactl scan --layout forge --root TREE: every reference
#    resolved against the store and every distinct key stat'ed.
#    With OLD=path/to/an/older/mediactl, that binary is timed beside it on both
#    trees, in the same hyperfine runs.
# 3. Reports mediactl's peak RSS scanning a tree of 1,000,000 distinct references
#    (target: <= 200 MiB) and the dense tree, from /usr/bin/time -v.
#
# Needs: go, rg, hyperfine, /usr/bin/time (apt-get install -y ripgrep hyperfine time).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
SIZE=${SIZE:-1GiB}
DENSE_SIZE=${DENSE_SIZE:-640MB}
RUNS=${RUNS:-5}
OLD=${OLD:-}
for tool in rg hyperfine /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "bench/scan.sh: $tool missing: apt-get install -y ripgrep hyperfine time" >&2; exit 2; }
done
mkdir -p "$BENCH_DIR" bench/out
bin="$BENCH_DIR/mediactl"
go build -o "$bin" ./cmd/mediactl

gen() { # gen DIR ARGS...: generate a tree once
  local dir=$1; shift
  if [ ! -f "$dir/.done" ]; then
    rm -rf "$dir"
    go run ./bench/gensessions -dir "$dir" "$@"
    touch "$dir/.done"
  fi
}
gen "$BENCH_DIR/scan-$SIZE" -size "$SIZE" -distinct 400000 -blobs 0
gen "$BENCH_DIR/scan-dense-$DENSE_SIZE" -size "$DENSE_SIZE" -distinct 200000 -blobs 200000 -prose 60

# time TREE NAME [STORE]: hyperfine medians of mediactl (and $OLD) and rg over TREE's sessions.
time_tree() {
  local tree=$1 name=$2 store=${3:-}
  local sessions="$tree/.forge/sessions" out="bench/out/scan-$name.json"
  cat "$sessions"/* >/dev/null # page cache
  local cmds=(-n mediactl "$bin scan -q --no-progress --sessions $sessions")
  [ -n "$OLD" ] && cmds+=(-n old "$OLD scan -q --no-progress --sessions $sessions")
  if [ -n "$store" ]; then
    cmds+=(-n mediactl-store "$bin scan -q --no-progress --layout forge --root $tree")
    [ -n "$OLD" ] && cmds+=(-n old-store "$OLD scan -q --no-progress --layout forge --root $tree")
  fi
  cmds+=(-n rg "rg -o [0-9a-f]{64} $sessions")
  # -i: a dense tree whose blobs are missing would exit 1; the figures stand.
  hyperfine -N -i -w 1 -r "$RUNS" --export-json "$out" "${cmds[@]}" >/dev/null
  echo "$out"
}
sparse_json=$(time_tree "$BENCH_DIR/scan-$SIZE" sparse)
dense_json=$(time_tree "$BENCH_DIR/scan-dense-$DENSE_SIZE" dense store)

# rss TREE: peak RSS in KiB of one scan of TREE's sessions, and what it counted.
rss() {
  local tree=$1 name=$2
  /usr/bin/time -v "$bin" scan --no-progress --sessions "$tree/.forge/sessions" -o json \
    > "$BENCH_DIR/rss-$name.json" 2> "$BENCH_DIR/rss-$name.time" || [ $? -le 1 ]
  awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$BENCH_DIR/rss-$name.time"
}
gen "$BENCH_DIR/scan-1m-refs" -size 700MiB -distinct 1000000 -prose 60 -blobs 0
rss_1m=$(rss "$BENCH_DIR/scan-1m-refs" 1m)
rss_dense=$(rss "$BENCH_DIR/scan-dense-$DENSE_SIZE" dense)

python3 - "$sparse_json" "$dense_json" "$BENCH_DIR" "$SIZE" "$DENSE_SIZE" "$rss_1m" "$rss_dense" "$(nproc)" <<'PY'
import json, os, subprocess, sys
sparse_json, dense_json, bench, size, dsize, rss_1m, rss_dense, cpus = sys.argv[1:]
def load(p):
    return {x["command"]: x for x in json.load(open(p))["results"]}
def refs(name):
    return json.load(open(os.path.join(bench, f"rss-{name}.json")))
def tree_bytes(tree):
    d = os.path.join(tree, ".forge", "sessions")
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
print(f"scan benchmark ({cpus} CPUs), session trees in page cache, median of runs (min-max)")
for label, p, tree, target in (("sparse", sparse_json, f"scan-{size}", 1.3), ("dense", dense_json, f"scan-dense-{dsize}", 1.0)):
    r = load(p)
    b = tree_bytes(os.path.join(bench, tree))
    rg = r["rg"]["median"]
    print(f"  {label}: {b/2**20:.0f} MiB")
    for name in ("mediactl", "old", "mediactl-store", "old-store", "rg"):
        if name not in r:
            continue
        x = r[name]
        line = f"    {name:15s} {x['median']:7.3f} s  ({x['min']:.3f}-{x['max']:.3f})  {b/x['median']/1e6:6.0f} MB/s  user+sys {x['user']+x['system']:.2f} s"
        if name != "rg":
            line += f"   ratio/rg {x['median']/rg:.2f}"
        print(line)
    print(f"    ratio mediactl/rg {r['mediactl']['median']/rg:.2f} (target <= {target})")
d = refs("dense")
print(f"  dense tree: {d['references']} references, {d['distinct_blobs']} distinct; peak RSS {int(rss_dense)/1024:.0f} MiB")
m = refs("1m")
print(f"  peak RSS, {m['distinct_blobs']} distinct references: {int(rss_1m)/1024:.0f} MiB (target <= 200 MiB)")
PY
