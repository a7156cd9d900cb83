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
# metadata). On each scale, /usr/bin/time -v:
#   local store, JSON sessions: scan; verify (full), and beside it the
#     find | xargs -P sha256sum pipeline on the same blobs; gc refcount plan (dry
#     run); gc plan of one shard of 16 (--shard 0/16); migrate --dry-run
#     into an empty file:// bucket, whole and one shard of 16. These rows take turns: each command runs
#     once on every scale to warm what it reads, then TURNS times (default 3)
#     1M, 10M, 1M, 10M, ...; the median wall and CPU time of its turns make its
#     row. A 10M run's state of the page cache (the kernel of this machine
#     reclaims pages it considers cold, and 10M's blobs and sessions are
#     larger than what it keeps) then weighs on both scales alike, which a
#     1M run timed at another moment than the 10M run does not;
#   SQLite sessions: scan; gc refcount plan; beside them sqlite3 .dump | rg -o
#     '[0-9a-f]{64}' (one run each, page cache warmed), and their ratios;
#   bucket store: the upload (migrate, 32 jobs); verify --fast; gc plan.
# The bucket part runs on the scales in BUCKET_SCALES (default 1M): filling a
# bucket on one local SeaweedFS with 2 million objects takes 36 minutes on a
# 2-core machine (926 objects/s measured here, 2026-12-02), and verify --fast
# of them 10 more, so the 10M bucket is asked for (BUCKET_SCALES="1M 10M").
# At exit the script purges its buckets, which for 2 million objects takes
# as long again: stopping the benchmarks' server and removing
# $BENCH_DIR/seaweedfs is quicker. BUCKET=0 leaves the bucket out.
# It prints wall time, throughput (references or blobs per second), CPU time
# per reference or blob and peak RSS per command and scale, the 10M/1M
# throughput and CPU-per-item ratios and the shard/whole gc-plan RSS ratio. Targets (issue 14): no command above 1 GiB peak RSS;
# throughput at 10M within 20 % of 1M; one shard's plan RSS <= 1/8 of the
# whole plan's.
#
# ROWS picks the groups of rows (default "local sqlite bucket"): ROWS=bucket
# times only the bucket rows, e.g. the 10M bucket on its own with
# BUCKET_SCALES="1M 10M" ROWS=bucket. LOCAL_ROWS picks among the local rows
# (default "scan verify sha256sum gcplan gcshard migrate migrateshard").
# SCALES="1M" runs only the small one. Needs go and /usr/bin/time; ~8 GB of
# disk under $BENCH_DIR (default /tmp/mediactl-bench).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
SCALES=${SCALES:-"1M 10M"}
BUCKET=${BUCKET:-1}
BUCKET_SCALES=${BUCKET_SCALES:-1M}
TURNS=${TURNS:-3}
ROWS=${ROWS:-"local sqlite bucket"}
LOCAL_ROWS=${LOCAL_ROWS:-"scan verify sha256sum gcplan gcshard migrate migrateshard"}
rows() { [[ " $ROWS " == *" $1 "* ]]; }
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

# measure NAME COUNT UNIT CMD...: one run of CMD, remembered under NAME (its
# wall and CPU seconds added to NAME's runs, its peak memory kept when it is
# the largest); row NAME prints NAME's medians.
declare -A walls cpus rss anon counts units rate
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
  local wall kb s cpu
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tf")
  kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$tf")
  cpu=$(awk -F: '/(User|System) time \(seconds\)/ {c += $2} END {print c}' "$tf")
  s=$(python3 -c 'import sys
p=[float(x) for x in sys.argv[1].split(":")]
print(p[-1]+60*(p[-2] if len(p)>1 else 0)+3600*(p[-3] if len(p)>2 else 0))' "$wall")
  walls[$name]+=" $s" cpus[$name]+=" $cpu" counts[$name]=$count units[$name]=$unit
  echo "  ($name: $s s, CPU $cpu s)" >&2
  (( kb > ${rss[$name]:-0} )) && rss[$name]=$kb
  (( peak_anon > ${anon[$name]:-0} )) && anon[$name]=$peak_anon
  return 0
}

# row NAME: prints NAME's median wall time, throughput, CPU time per item and
# peak memory over its runs, and remembers its throughput.
row() {
  local name=$1 line
  line=$(python3 - "$name" "${counts[$name]}" "${units[$name]}" "${walls[$name]}" "${cpus[$name]}" "${rss[$name]}" "${anon[$name]}" <<'PY'
import statistics, sys
name, count, unit, walls, cpus, kb, anon = sys.argv[1:]
count, walls, cpus = float(count), [float(x) for x in walls.split()], [float(x) for x in cpus.split()]
w, c = statistics.median(walls), statistics.median(cpus)
runs = f"median of {len(walls)}" if len(walls) > 1 else "1 run"
print(f"{count/w:.0f} {c/count*1e6:.3f}   {name:<26} {count:10.0f} {unit} in {w:7.2f} s = {count/w:9.0f} {unit}/s, CPU {c/count*1e6:6.2f} us/{unit[:-1]}, peak RSS {int(kb)//1024:5d} MiB (anonymous {int(anon)//1024:5d} MiB), {runs}")
PY
)
  rate[$name]=${line%% *}
  line=${line#* }
  cpuper[$name]=${line%% *}
  say "${line#* }"
}
declare -A cpuper

# scale_of SCALE: sets size, blobs and work for SCALE.
scale_of() {
  case $1 in
    1M)  size=640MB  blobs=200000 ;;
    10M) size=6400MB blobs=2000000 ;;
    *) echo "bench/scale.sh: unknown scale $1 (1M or 10M)" >&2; exit 2 ;;
  esac
  work="$BENCH_DIR/scale-$1"
}

# Build each scale's tree and database, and count its references.
declare -A nrefs
for scale in $SCALES; do
  scale_of "$scale"
  if [ ! -f "$work/.done" ]; then
    rm -rf "$work"
    echo "generating $scale ($size of sessions, $blobs blobs) ..."
    go run ./bench/gensessions -dir "$work" -size "$size" -distinct "$blobs" -blobs "$blobs" -prose 60 -blob-age 1000h
    touch "$work/.done"
  fi
  db="$work/coffer.db"
  if rows sqlite && [ ! -f "$db.done" ]; then
    go run ./bench/tosqlite -sessions "$work/.forge/sessions" -db "$db"
    touch "$db.done"
  fi
  nrefs[$scale]=$("$bin" scan --layout forge --root "$work" -q --no-progress -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["references"])')
  say "scale $scale: ${nrefs[$scale]} references, $blobs blobs"
done

# local NAME SCALE: runs the local row NAME on SCALE once.
local_run() {
  local name=$1 scale=$2 inbound
  scale_of "$scale"
  inbound="$work/.forge/files/inbound"
  case $name in
    scan) measure "scan-$scale" "${nrefs[$scale]}" refs "$bin" scan --layout forge --root "$work" -q --no-progress -o json ;;
    verify) measure "verify-$scale" "$blobs" blobs "$bin" verify --store "$inbound" -q --no-progress -o json ;;
    # verify's peer on the same blobs, the pipeline of bench/verify.sh.
    sha256sum) measure "sha256sum-$scale" "$blobs" blobs bash -c 'find "$1" -type f -print0 | xargs -0 -P"$(nproc)" -n 20000 sha256sum >/dev/null' _ "$inbound" ;;
    gcplan) measure "gcplan-$scale" "${nrefs[$scale]}" refs "$bin" gc --layout forge --root "$work" --max-delete 100% -q --no-progress -o json ;;
    gcshard) measure "gcshard-$scale" "${nrefs[$scale]}" refs "$bin" gc --layout forge --root "$work" --shard 0/16 --max-delete 100% -q --no-progress -o json ;;
    migrate | migrateshard)
      local part=()
      [ "$name" = migrateshard ] && part=(--shard 0/16)
      rm -rf "$BENCH_DIR/scale-$scale-bucket" && mkdir -p "$BENCH_DIR/scale-$scale-bucket"
      measure "$name-$scale" "$blobs" blobs "$bin" migrate --store "$inbound" --to "file://$BENCH_DIR/scale-$scale-bucket" "${part[@]}" --dry-run -q --no-progress -o json ;;
  esac
}

# The local rows take turns (see the top): per command, a warming run on each
# scale, forgotten, then TURNS rounds over the scales.
local_rows=$LOCAL_ROWS
rows local || local_rows=""
for name in $local_rows; do
  for scale in $SCALES; do
    local_run "$name" "$scale"
    unset "walls[$name-$scale]" "cpus[$name-$scale]" "rss[$name-$scale]" "anon[$name-$scale]"
  done
  for ((turn = 1; turn <= TURNS; turn++)); do
    for scale in $SCALES; do local_run "$name" "$scale"; done
  done
  for scale in $SCALES; do row "$name-$scale"; done
done

for scale in $SCALES; do
  scale_of "$scale"
  db="$work/coffer.db"
  if rows sqlite; then
    cat "$db" >/dev/null
    measure "scan-sqlite-$scale" 0 refs "$bin" scan --sessions "sqlite:$db" --store "$work/.forge/files/inbound" -q --no-progress -o json
    # The database holds the messages without the tool calls: count what it has.
    srefs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["references"])' "$BENCH_DIR/scale-scan-sqlite-$scale.out")
    counts[scan-sqlite-$scale]=$srefs
    row "scan-sqlite-$scale"
    measure "gcplan-sqlite-$scale" "$srefs" refs "$bin" gc --sessions "sqlite:$db" --store "$work/.forge/files/inbound" --max-delete 100% -q --no-progress -o json
    row "gcplan-sqlite-$scale"
    # The peer: every table, every column, through ripgrep (issue 40's yardstick).
    if command -v sqlite3 >/dev/null && command -v rg >/dev/null; then
      measure "dumprg-sqlite-$scale" "$srefs" refs bash -c 'sqlite3 "$1" .dump | rg -o "[0-9a-f]{64}" | wc -l' _ "$db"
      row "dumprg-sqlite-$scale"
      say "$(python3 -c 'import statistics as s, sys; a, b, c = (s.median(map(float, x.split())) for x in sys.argv[1:]); print(f"  sqlite at '"$scale"': scan / dump|rg {a/c:.2f} (target <= 1.0), gc plan / dump|rg {b/c:.2f} (target <= 1.2)")' "${walls[scan-sqlite-$scale]}" "${walls[gcplan-sqlite-$scale]}" "${walls[dumprg-sqlite-$scale]}")"
    fi
  fi

  if rows bucket && [ "$BUCKET" = 1 ] && [[ " $BUCKET_SCALES " == *" $scale "* ]]; then
    b="scale-${scale,,}-$(date +%s)"
    rclone mkdir "w:$b"
    bench_buckets+=("$b")
    url=$(s3url "$b")
    measure "upload-$scale" "$blobs" blobs "$bin" migrate --store "$work/.forge/files/inbound" --to "$url" --jobs 32 \
      --journal "$BENCH_DIR/scale-$scale-upload.jsonl" -q --no-progress -o json
    row "upload-$scale"
    rm -f "$BENCH_DIR/scale-$scale-upload.jsonl"
    measure "verify-fast-bucket-$scale" "$blobs" blobs "$bin" verify --store "$url" --fast -q --no-progress -o json
    row "verify-fast-bucket-$scale"
    measure "gcplan-bucket-$scale" "${nrefs[$scale]}" refs "$bin" gc --store "$url" --sessions "$work/.forge/sessions" --max-delete 100% -q --no-progress -o json
    row "gcplan-bucket-$scale"
  fi
done

if [[ " $SCALES " == *" 1M "* && " $SCALES " == *" 10M "* ]]; then
  say "10M vs 1M (target: throughput >= 0.80), and CPU time per item 1M/10M:"
  cs=""
  rows local && cs=$local_rows
  rows sqlite && cs="$cs scan-sqlite gcplan-sqlite"
  rows sqlite && command -v sqlite3 >/dev/null && command -v rg >/dev/null && cs="$cs dumprg-sqlite"
  rows bucket && [ "$BUCKET" = 1 ] && [[ " $BUCKET_SCALES " == *" 1M "* && " $BUCKET_SCALES " == *" 10M "* ]] && cs="$cs upload verify-fast-bucket gcplan-bucket"
  for c in $cs; do
    say "$(python3 -c 'import sys; a,b,c,d=map(float,sys.argv[2:]); print(f"  {sys.argv[1]:<20} throughput {b/a:.2f}, CPU per item {c/d:.2f}")' "$c" "${rate[$c-1M]}" "${rate[$c-10M]}" "${cpuper[$c-1M]}" "${cpuper[$c-10M]}")"
  done
fi
[[ " $local_rows " == *" gcplan "* && " $local_rows " == *" gcshard "* ]] && for scale in $SCALES; do
  say "$(python3 -c 'import sys; w,s,wa,sa=map(int,sys.argv[2:]); print(f"gc plan memory at {sys.argv[1]}: one shard of 16 / whole: peak RSS {s//1024}/{w//1024} MiB = {s/w:.3f}, anonymous {sa//1024}/{wa//1024} MiB = {sa/wa:.3f} (target <= 0.125)")' "$scale" "${rss[gcplan-$scale]}" "${rss[gcshard-$scale]}" "${anon[gcplan-$scale]}" "${anon[gcshard-$scale]}")"
done
[[ " $local_rows " == *" migrate "* && " $local_rows " == *" migrateshard "* ]] && for scale in $SCALES; do
  say "$(python3 -c 'import sys; w,s=map(int,sys.argv[2:]); print(f"migrate --dry-run memory at {sys.argv[1]}: one shard of 16 / whole: peak RSS {s//1024}/{w//1024} MiB = {s/w:.3f}")' "$scale" "${rss[migrate-$scale]}" "${rss[migrateshard-$scale]}")"
done
max=0
for k in "${!rss[@]}"; do (( rss[$k] > max )) && max=${rss[$k]}; done
say "largest peak RSS: $((max / 1024)) MiB (target <= 1024)"
