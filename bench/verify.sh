#!/usr/bin/env bash
# bench/verify.sh — mediactl verify against `find | xargs -P sha256sum` on the same stores.
#
# 1. Measures this machine's single-stream sha256 rate (Go, bench/sha256rate).
#    The large-file run also times bench/readhash, a bare read(2) + crypto/sha256
#    loop, one file at a time on every CPU: what hashing one stream per core
#    achieves with the kernel's copy out of the page cache, which the sha256 rate
#    leaves out. mediactl hashes two blobs per core in step (pkg/sha256pair).
# 2. Generates (once, cached in $BENCH_DIR) 2 GiB of 0.5–5 MB blobs and 200,000 blobs of
#    4 KiB, named by their sha256, and warms the page cache.
# 3. Times, in the same run, mediactl verify (hash + compare with names) and
#      find DIR -type f -print0 | xargs -0 -P"$(nproc)" sha256sum
#    and reports throughput and files per second.
# Targets: large files >= 3x the xargs pipeline and >= 80% of single-stream rate x cores;
# small files >= 2x the xargs pipeline in files per second.
#
# Needs: go, hyperfine, coreutils (apt-get install -y hyperfine).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
RUNS=${RUNS:-5}
command -v hyperfine >/dev/null || { echo "bench/verify.sh: hyperfine missing: apt-get install -y hyperfine" >&2; exit 2; }
mkdir -p "$BENCH_DIR" bench/out
bin="$BENCH_DIR/mediactl"
go build -o "$bin" ./cmd/mediactl
go build -o "$BENCH_DIR/readhash" ./bench/readhash
cpus=$(nproc)
rate=$(go run ./bench/sha256rate)

large="$BENCH_DIR/verify-large"
small="$BENCH_DIR/verify-small"
if [ ! -f "$large.done" ]; then
  rm -rf "$large"; go run ./bench/genblobs -dir "$large" -size 2GiB -min 512KiB -max 5MiB; touch "$large.done"
fi
if [ ! -f "$small.done" ]; then
  rm -rf "$small"; go run ./bench/genblobs -dir "$small" -count 200000 -min 4KiB -max 4KiB; touch "$small.done"
fi

measure() { # name dir [extra hyperfine args] -> median seconds of mediactl, xargs (and readhash)
  local name=$1 dir=$2
  shift 2
  find "$dir" -type f -print0 | xargs -0 cat >/dev/null # page cache
  hyperfine -N -w 1 -r "$RUNS" --export-json "bench/out/verify-$name.json" \
    -n mediactl "$bin verify -q --no-progress --store $dir" \
    -n xargs "bash -c 'find $dir -type f -print0 | xargs -0 -P$cpus sha256sum >/dev/null'" "$@" >/dev/null
  python3 -c '
import json,sys
r={x["command"]:x for x in json.load(open(sys.argv[1]))["results"]}
print(r["mediactl"]["median"], r["xargs"]["median"], r["readhash"]["median"] if "readhash" in r else 0)' "bench/out/verify-$name.json"
}
read -r lm lx lr < <(measure large "$large" -n readhash "$BENCH_DIR/readhash $large")
read -r sm sx _ < <(measure small "$small")
lbytes=$(du -sb "$large" | cut -f1)
lfiles=$(find "$large" -type f | wc -l)
sfiles=$(find "$small" -type f | wc -l)

python3 - "$cpus" "$rate" "$lbytes" "$lfiles" "$lm" "$lx" "$lr" "$sfiles" "$sm" "$sx" <<'PY'
import sys
cpus, rate, lbytes, lfiles, lm, lx, lr, sfiles, sm, sx = sys.argv[1:]
cpus, rate, lbytes, lfiles, sfiles = int(cpus), float(rate), int(lbytes), int(lfiles), int(sfiles)
lm, lx, lr, sm, sx = map(float, (lm, lx, lr, sm, sx))
ideal = rate * cpus
print(f"verify benchmark ({cpus} CPUs), stores in page cache, median of runs")
print(f"  single-stream sha256 (Go): {rate/1e9:.2f} GB/s; x {cpus} cores = {ideal/1e9:.2f} GB/s")
print(f"  large: {lfiles} files, {lbytes/2**30:.2f} GiB")
print(f"    mediactl verify       {lm:7.3f} s  {lbytes/lm/1e9:6.2f} GB/s")
print(f"    xargs -P{cpus} sha256sum  {lx:7.3f} s  {lbytes/lx/1e9:6.2f} GB/s")
print(f"    readhash (1 stream/CPU){lr:7.3f} s  {lbytes/lr/1e9:6.2f} GB/s = {100*lbytes/lr/ideal:.0f}% of sha256 x cores (bare read(2) + crypto/sha256)")
print(f"    ratio {lx/lm:.2f}x (target >= 3.0); {100*lbytes/lm/ideal:.0f}% of sha256 x cores (target >= 80%); {100*lr/lm:.0f}% of readhash")
print(f"  small: {sfiles} files of 4 KiB")
print(f"    mediactl verify       {sm:7.3f} s  {sfiles/sm:9.0f} files/s")
print(f"    xargs -P{cpus} sha256sum  {sx:7.3f} s  {sfiles/sx:9.0f} files/s")
print(f"    ratio {sx/sm:.2f}x (target >= 2.0)")
PY
