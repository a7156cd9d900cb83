#!/usr/bin/env bash
# bench/scale.sh — does any command grow worse than linearly with the store?
#
# Builds two forge work directories with bench/gensessions (sessions dense
# with references, 60-byte prose, every blob an 8-byte file in inbound/):
#   1M:  ~1.1 million references over 200,000 blobs (640 MB of sessions)
#   10M: ~11 million references over 2,000,000 blobs (6.4 GB of sessions)
# and runs on each, with the page cache warm, /usr/bin/time -v:
#   scan; verify (full, local); gc refcount plan (dry run); gc plan of one
#   shard of 16 (--shard 0/16); migrate --dry-run into an empty file:// bucket.
# It prints wall time, throughput (references or blobs per second) and peak
# RSS per command and scale, the 10M/1M throughput ratio and the shard/whole
# gc-plan RSS ratio. Targets (issue 14): no command above 1 GiB peak RSS;
# throughput at 10M within 20 % of 1M; one shard's plan RSS <= 1/8 of the
# whole plan's.
#
# SCALES="1M" runs only the small one. Needs go and /usr/bin/time; ~8 GB of
# disk under $BENCH_DIR (default /tmp/mediactl-bench).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
SCALES=${SCALES:-"1M 10M"}
command -v /usr/bin/time >/dev/null || { echo "bench/scale.sh: /usr/bin/time missing: apt-get install -y time" >&2; exit 2; }
mkdir -p "$BENCH_DIR" bench/out
bin="$BENCH_DIR/mediactl"
go build -o "$bin" ./cmd/mediactl

out=bench/out/scale.txt
: > "$out"
say() { echo "$*" | tee -a "$out"; }

# measure NAME COUNT UNIT CMD...: one run; prints a row and remembers it.
declare -A secs rss rate
measure() {
  local name=$1 count=$2 unit=$3; shift 3
  local tf="$BENCH_DIR/scale-$name.time" code=0
  /usr/bin/time -v "$@" >"$BENCH_DIR/scale-$name.out" 2>"$tf" || code=$?
  if [ "$code" -gt 1 ]; then
    echo "bench/scale.sh: $name exited $code:" >&2; tail -5 "$tf" >&2; exit 1
  fi
  local wall kb s
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tf")
  kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$tf")
  s=$(python3 -c 'import sys
p=[float(x) for x in sys.argv[1].split(":")]
print(p[-1]+60*(p[-2] if len(p)>1 else 0)+3600*(p[-3] if len(p)>2 else 0))' "$wall")
  secs[$name]=$s rss[$name]=$kb
  rate[$name]=$(python3 -c 'import sys; print(f"{float(sys.argv[1])/float(sys.argv[2]):.0f}")' "$count" "$s")
  say "$(printf '  %-22s %10s %s in %7.2f s = %9s %s/s, peak RSS %5d MiB' "$name" "$count" "$unit" "$s" "${rate[$name]}" "$unit" $((kb / 1024)))"
}

for scale in $SCALES; do
  case $scale in
    1M)  size=640MB  blobs=200000 ;;
    10M) size=6400MB blobs=2000000 ;;
    *) echo "bench/scale.sh: unknown scale $scale (1M or 10M)" >&2; exit 2 ;;
  esac
  work="$BENCH_DIR/scale-$scale"
  if [ ! -f "$work/.done" ]; then
    rm -rf "$work"
    echo "generating $scale ($size of sessions, $blobs blobs) ..."
    go run ./bench/gensessions -dir "$work" -size "$size" -distinct "$blobs" -blobs "$blobs" -prose 60 -blob-age 1000h
    touch "$work/.done"
  fi
  # Warm the page cache, as every other benchmark here does.
  find "$work" -type f -exec cat {} + >/dev/null 2>&1 || true
  refs=$("$bin" scan --layout forge --root "$work" -q --no-progress -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["references"])')
  bucket="$BENCH_DIR/scale-$scale-bucket"
  rm -rf "$bucket" && mkdir -p "$bucket"
  say "scale $scale: $refs references, $blobs blobs"
  measure "scan-$scale" "$refs" refs "$bin" scan --layout forge --root "$work" -q --no-progress -o json
  measure "verify-$scale" "$blobs" blobs "$bin" verify --store "$work/.forge/files/inbound" -q --no-progress -o json
  measure "gcplan-$scale" "$refs" refs "$bin" gc --layout forge --root "$work" --max-delete 100% -q --no-progress -o json
  measure "gcshard-$scale" "$refs" refs "$bin" gc --layout forge --root "$work" --shard 0/16 --max-delete 100% -q --no-progress -o json
  measure "migrate-$scale" "$blobs" blobs "$bin" migrate --store "$work/.forge/files/inbound" --to "file://$bucket" --dry-run -q --no-progress -o json
done

if [[ " $SCALES " == *" 1M "* && " $SCALES " == *" 10M "* ]]; then
  say "10M vs 1M throughput (target >= 0.80):"
  for c in scan verify gcplan gcshard migrate; do
    say "$(python3 -c 'import sys; a,b=float(sys.argv[2]),float(sys.argv[3]); print(f"  {sys.argv[1]:<8} {b/a:.2f}")' "$c" "${rate[$c-1M]}" "${rate[$c-10M]}")"
  done
fi
for scale in $SCALES; do
  say "$(python3 -c 'import sys; w,s=int(sys.argv[2]),int(sys.argv[3]); print(f"gc plan RSS at {sys.argv[1]}: one shard of 16 {s//1024} MiB / whole {w//1024} MiB = {s/w:.3f} (target <= 0.125)")' "$scale" "${rss[gcplan-$scale]}" "${rss[gcshard-$scale]}")"
done
max=0
for k in "${!rss[@]}"; do (( rss[$k] > max )) && max=${rss[$k]}; done
say "largest peak RSS: $((max / 1024)) MiB (target <= 1024)"
