#!/usr/bin/env bash
# bench/scale.sh — does any command grow worse than linearly with the store?
#
# Builds two forge work directories with bench/gensessions (sessions dense
# with references, 60-byte prose, every blob an 8-byte file in inbound/):
#   1M:  ~1.1 million references over 200,000 blobs (640 MB of sessions)
#   10M: ~11 million references over 2,000,000 blobs (6.4 GB of sessions)
# The same messages (text and attachments, not the tool calls) are also
# loaded into a SQLite database laid out as
# coffer's (bench/tosqlite), and the same blobs into a bucket on a local
# SeaweedFS (by mediactl migrate, which gives each object its sha256
# metadata). On each scale, with the page cache warm, /usr/bin/time -v:
#   local store, JSON sessions: scan; verify (full), and beside it the
#     find | xargs -P sha256sum pipeline on the same blobs; gc refcount plan (dry
#     run); gc plan of one shard of 16 (--shard 0/16); migrate --dry-run
#     into an empty file:// bucket;
#   SQLite sessions: scan; gc refcount plan;
#   bucket store: the upload (migrate, 32 jobs); verify --fast; gc plan.
# The bucket part runs on the scales in BUCKET_SCALES (default 1M): filling a
# bucket on one local SeaweedFS with 2 million objects takes hours on a
# 2-core machine (about 240 small objects/s measured here), so the 10M bucket
# run is for a larger machine (BUCKET_SCALES="1M 10M"). BUCKET=0 leaves the
# bucket out.
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
BUCKET=${BUCKET:-1}
BUCKET_SCALES=${BUCKET_SCALES:-1M}
command -v /usr/bin/time >/dev/null || { echo "bench/scale.sh: /usr/bin/time missing: apt-get install -y time" >&2; exit 2; }
mkdir -p "$BENCH_DIR" bench/out
bin="$BENCH_DIR/mediactl"
go build -o "$bin" ./cmd/mediactl

. bench/lib.sh
if [ "$BUCKET" = 1 ]; then
  seaweedfs_up
fi

out=bench/out/scale.txt
: > "$out"
say() { echo "$*" | tee -a "$out"; }

# measure NAME COUNT UNIT CMD...: one run; prints a row and remembers it.
declare -A secs rss anon rate
measure() {
  local name=$1 count=$2 unit=$3; shift 3
  local tf="$BENCH_DIR/scale-$name.time" code=0 tp child peak_anon=0 k v
  /usr/bin/time -v "$@" >"$BENCH_DIR/scale-$name.out" 2>"$tf" &
  tp=$!
  # Peak anonymous memory, sampled every 50 ms: the heap, stacks and buffers
  # a run grows with, without the file-backed pages of the binary itself
  # (~40 MiB of a 90 MB executable that every command touches at start,
  # clean pages shared by all runs that the kernel can drop).
  while kill -0 "$tp" 2>/dev/null; do
    child=$(pgrep -P "$tp" | head -1 || true)
    if [ -n "$child" ] && [ -r "/proc/$child/status" ]; then
      while read -r k v _; do
        [ "$k" = RssAnon: ] && (( v > peak_anon )) && peak_anon=$v
      done <"/proc/$child/status" 2>/dev/null || true
    fi
    sleep 0.05
  done
  wait "$tp" || code=$?
  if [ "$code" -gt 1 ]; then
    echo "bench/scale.sh: $name exited $code:" >&2; tail -5 "$tf" >&2; exit 1
  fi
  local wall kb s
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tf")
  kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$tf")
  s=$(python3 -c 'import sys
p=[float(x) for x in sys.argv[1].split(":")]
print(p[-1]+60*(p[-2] if len(p)>1 else 0)+3600*(p[-3] if len(p)>2 else 0))' "$wall")
  secs[$name]=$s rss[$name]=$kb anon[$name]=$peak_anon
  rate[$name]=$(python3 -c 'import sys; print(f"{float(sys.argv[1])/float(sys.argv[2]):.0f}")' "$count" "$s")
  say "$(printf '  %-26s %10s %s in %7.2f s = %9s %s/s, peak RSS %5d MiB (anonymous %5d MiB)' "$name" "$count" "$unit" "$s" "${rate[$name]}" "$unit" $((kb / 1024)) $((peak_anon / 1024)))"
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
  # verify reads every blob: warm their pages right before, or at 10M the
  # sessions and the database read since have pushed them out (2 million
  # 8-byte files take 8 GiB of page cache) and verify measures the disk.
  find "$work/.forge/files/inbound" -type f -print0 | xargs -0 -n 20000 cat >/dev/null
  measure "verify-$scale" "$blobs" blobs "$bin" verify --store "$work/.forge/files/inbound" -q --no-progress -o json
  # verify's peer on the same blobs, the pipeline of bench/verify.sh (pages
  # warmed again): at 10M the kernel's work per file (a name looked up in a
  # folder of 2 million, pages the sessions pushed out) grows for both alike.
  find "$work/.forge/files/inbound" -type f -print0 | xargs -0 -n 20000 cat >/dev/null
  measure "sha256sum-$scale" "$blobs" blobs bash -c 'find "$1" -type f -print0 | xargs -0 -P"$(nproc)" -n 20000 sha256sum >/dev/null' _ "$work/.forge/files/inbound"
  # The blobs read since pushed the sessions' pages out: warm them again for
  # the commands that read them.
  cat "$work/.forge/sessions"/* >/dev/null
  measure "gcplan-$scale" "$refs" refs "$bin" gc --layout forge --root "$work" --max-delete 100% -q --no-progress -o json
  measure "gcshard-$scale" "$refs" refs "$bin" gc --layout forge --root "$work" --shard 0/16 --max-delete 100% -q --no-progress -o json
  measure "migrate-$scale" "$blobs" blobs "$bin" migrate --store "$work/.forge/files/inbound" --to "file://$bucket" --dry-run -q --no-progress -o json

  db="$work/coffer.db"
  if [ ! -f "$db.done" ]; then
    go run ./bench/tosqlite -sessions "$work/.forge/sessions" -db "$db"
    touch "$db.done"
  fi
  cat "$db" >/dev/null
  srefs=$("$bin" scan --sessions "sqlite:$db" --store "$work/.forge/files/inbound" -q --no-progress -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["references"])')
  measure "scan-sqlite-$scale" "$srefs" refs "$bin" scan --sessions "sqlite:$db" --store "$work/.forge/files/inbound" -q --no-progress -o json
  measure "gcplan-sqlite-$scale" "$srefs" refs "$bin" gc --sessions "sqlite:$db" --store "$work/.forge/files/inbound" --max-delete 100% -q --no-progress -o json

  if [ "$BUCKET" = 1 ] && [[ " $BUCKET_SCALES " == *" $scale "* ]]; then
    b="scale-${scale,,}-$(date +%s)"
    rclone mkdir "w:$b"
    bench_buckets+=("$b")
    url=$(s3url "$b")
    measure "upload-$scale" "$blobs" blobs "$bin" migrate --store "$work/.forge/files/inbound" --to "$url" --jobs 32 \
      --journal "$BENCH_DIR/scale-$scale-upload.jsonl" -q --no-progress -o json
    rm -f "$BENCH_DIR/scale-$scale-upload.jsonl"
    measure "verify-fast-bucket-$scale" "$blobs" blobs "$bin" verify --store "$url" --fast -q --no-progress -o json
    measure "gcplan-bucket-$scale" "$refs" refs "$bin" gc --store "$url" --sessions "$work/.forge/sessions" --max-delete 100% -q --no-progress -o json
  fi
done

if [[ " $SCALES " == *" 1M "* && " $SCALES " == *" 10M "* ]]; then
  say "10M vs 1M throughput (target >= 0.80):"
  cs="scan verify sha256sum gcplan gcshard migrate scan-sqlite gcplan-sqlite"
  [ "$BUCKET" = 1 ] && [[ " $BUCKET_SCALES " == *" 10M "* ]] && cs="$cs upload verify-fast-bucket gcplan-bucket"
  for c in $cs; do
    say "$(python3 -c 'import sys; a,b=float(sys.argv[2]),float(sys.argv[3]); print(f"  {sys.argv[1]:<20} {b/a:.2f}")' "$c" "${rate[$c-1M]}" "${rate[$c-10M]}")"
  done
fi
for scale in $SCALES; do
  say "$(python3 -c 'import sys; w,s,wa,sa=map(int,sys.argv[2:]); print(f"gc plan memory at {sys.argv[1]}: one shard of 16 / whole: peak RSS {s//1024}/{w//1024} MiB = {s/w:.3f}, anonymous {sa//1024}/{wa//1024} MiB = {sa/wa:.3f} (target <= 0.125)")' "$scale" "${rss[gcplan-$scale]}" "${rss[gcshard-$scale]}" "${anon[gcplan-$scale]}" "${anon[gcshard-$scale]}")"
done
max=0
for k in "${!rss[@]}"; do (( rss[$k] > max )) && max=${rss[$k]}; done
say "largest peak RSS: $((max / 1024)) MiB (target <= 1024)"
