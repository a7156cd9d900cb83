#!/usr/bin/env bash
# bench/migrate.sh — mediactl migrate against rclone copy, uploading the same stores to
# the same S3 server (SeaweedFS on 127.0.0.1).
#
# 1. Generates (once, cached in $BENCH_DIR) two flat stores of content-addressed blobs
#    (<sha256>.bin): 20,000 blobs of 100 KiB (1.9 GiB) and 40 blobs of 50 MiB (2 GiB),
#    and warms the page cache before each run.
# 2. Starts a SeaweedFS of its own with scripts/services/seaweedfs.sh (run folder
#    $BENCH_DIR/seaweedfs, so that a test run's stop leaves it alone), or reuses it.
# 3. For each store, $RUNS times (default 3), the tools taking turns to go first,
#    uploads it into a fresh bucket with
#      rclone copy DIR w:BUCKET --transfers N
#    and into another fresh bucket with
#      mediactl migrate --store DIR --to 's3://BUCKET?endpoint=…' --jobs N -q -o json
#    timing each under /usr/bin/time -v (wall time, peak RSS), checks that the bucket
#    holds every blob, then deletes the bucket. Reports the median MB/s of each tool,
#    the throughput ratio mediactl/rclone (and that of each back-to-back pair of runs),
#    and the highest peak RSS; all runs go to
#    bench/out/migrate.json. The server is stopped at the end if this script started it.
#
#   bench/migrate.sh                # both tools, N = 8
#   bench/migrate.sh --jobs 16      # both tools, N = 16
#   bench/migrate.sh --rclone-only  # the peer half alone
#
# Needs: go, rclone and /usr/bin/time (installed with apt-get when missing and run as
# root). Debian's rclone fails when AWS_CA_BUNDLE is set, so it runs without it.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
RUNS=${RUNS:-3}
jobs=8
rclone_only=false
while [ $# -gt 0 ]; do
  case $1 in
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --jobs=*) jobs=${1#--jobs=}; shift ;;
    --rclone-only) rclone_only=true; shift ;;
    *) echo "usage: bench/migrate.sh [--jobs N] [--rclone-only]" >&2; exit 2 ;;
  esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "bench/migrate.sh: --jobs $jobs is not a positive number" >&2; exit 2; }
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "bench/migrate.sh: RUNS=$RUNS is not a positive number" >&2; exit 2; }

. bench/lib.sh
need rclone rclone
need /usr/bin/time time

mkdir -p "$BENCH_DIR" bench/out
# One run at a time: runs share the stores, the logs and the server.
exec 8>"$BENCH_DIR/migrate.lock"
if ! flock -n 8; then
  echo "bench/migrate.sh: waiting for another run to finish" >&2
  flock 8
fi
bin="$BENCH_DIR/mediactl"
go build -o "$bin" ./cmd/mediactl

small="$BENCH_DIR/migrate-small" large="$BENCH_DIR/migrate-large"
if [ ! -f "$small.done" ]; then
  rm -rf "$small"; go run ./bench/genblobs -dir "$small" -count 20000 -min 100KiB -max 100KiB; touch "$small.done"
fi
if [ ! -f "$large.done" ]; then
  rm -rf "$large"; go run ./bench/genblobs -dir "$large" -count 40 -min 50MiB -max 50MiB; touch "$large.done"
fi

seaweedfs_up

run_id=$(date +%s)
results="$BENCH_DIR/migrate-results.txt"
: >"$results"

# run SET DIR TOOL I: uploads DIR into a fresh bucket with TOOL, appends
# "SET TOOL seconds peak_kib objects bytes" to $results, deletes the bucket.
run() {
  local set=$1 dir=$2 tool=$3 i=$4
  local log="$BENCH_DIR/migrate-$set-$tool"
  bucket="bench-$set-$tool-$run_id-$i"
  bench_buckets+=("$bucket")
  rclone mkdir "w:$bucket" || die "could not create bucket $bucket on $endpoint"
  # mediactl keeps its journal and lock in DIR/.mediactl: start each run without one.
  rm -rf "${dir:?}/.mediactl"
  find "$dir" -type f -print0 | xargs -0 cat >/dev/null # page cache
  echo "bench/migrate.sh: $set, run $i of $RUNS: $tool into $bucket" >&2
  local rc=0
  case $tool in
    rclone)
      /usr/bin/time -v -o "$log.time" env -u AWS_CA_BUNDLE rclone --config /dev/null \
        copy "$dir" "w:$bucket" --transfers "$jobs" --exclude '.mediactl/**' >"$log.out" 2>&1 || rc=$?
      ;;
    mediactl)
      /usr/bin/time -v -o "$log.time" "$bin" migrate --store "$dir" \
        --to "$(s3url "$bucket")" \
        --jobs "$jobs" -q -o json >"$log.json" 2>"$log.out" || rc=$?
      ;;
  esac
  [ "$rc" -eq 0 ] || { tail -n 20 "$log.out" >&2; die "$tool on $set exited $rc; see $log.out"; }
  local size
  size=$(rclone size "w:$bucket" --json) || die "rclone size w:$bucket failed"
  python3 - "$set" "$tool" "$log.time" "$size" >>"$results" <<'PY'
import json, re, sys
set_, tool, timefile, size = sys.argv[1:]
t = open(timefile).read()
wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", t).group(1)
secs = 0.0
for part in wall.split(":"):
    secs = secs * 60 + float(part)
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
s = json.loads(size)
print(set_, tool, secs, rss, s["count"], s["bytes"])
PY
  rclone purge "w:$bucket" || die "rclone purge w:$bucket failed"
}

# check_mediactl: the mediactl step fails here, clearly, while the command does
# not exist yet (mediactl exits 0 on an unknown command, so the help text is checked).
check_mediactl() {
  local help
  help=$("$bin" migrate --help 2>&1) || true
  [[ $help == *--to* ]] ||
    die "mediactl migrate is not available in this build: \`mediactl migrate --help\` says: $(head -n 1 <<<"$help")"
}

for set in small large; do
  dir=$small; [ "$set" = large ] && dir=$large
  $rclone_only || check_mediactl
  for ((i = 1; i <= RUNS; i++)); do
    # The tools take turns going first: the first upload to a fresh server is slower.
    order="rclone mediactl"
    ((i % 2)) || order="mediactl rclone"
    for tool in $order; do
      [ "$tool" = mediactl ] && $rclone_only && continue
      run "$set" "$dir" "$tool" "$i"
    done
  done
done

python3 - "$results" "$small" "$large" "$jobs" "$RUNS" "$(nproc)" "$(env -u AWS_CA_BUNDLE rclone version 2>/dev/null | head -n 1)" <<'PY'
import json, os, statistics, sys
results, small, large, jobs, runs, cpus, rversion = sys.argv[1:]
dirs = {"small": small, "large": large}
src = {}
for name, d in dirs.items():
    files = [e.path for e in os.scandir(d) if e.is_file() and not e.name.startswith(".")]
    src[name] = (len(files), sum(os.path.getsize(f) for f in files))
rows = {}
for line in open(results):
    set_, tool, secs, rss, count, nbytes = line.split()
    rows.setdefault(set_, {}).setdefault(tool, {"runs": []})["runs"].append(
        dict(seconds=float(secs), peak_rss_kib=int(rss), objects=int(count), bytes=int(nbytes)))
out = {"jobs": int(jobs), "runs": int(runs), "cpus": int(cpus), "rclone": rversion, "sets": {}}
print(f"migrate benchmark ({cpus} CPUs), SeaweedFS on 127.0.0.1, {jobs} parallel transfers, stores in page cache, median of {runs} runs")
ok = True
for set_, tools in rows.items():
    count, nbytes = src[set_]
    label = f"{count} blobs of {nbytes / count / 2**10:.0f} KiB" if nbytes / count < 2**20 else f"{count} blobs of {nbytes / count / 2**20:.0f} MiB"
    print(f"  {set_}: {label}, {nbytes / 2**30:.2f} GiB")
    for tool, r in tools.items():
        secs = [x["seconds"] for x in r["runs"]]
        r["seconds"] = statistics.median(secs)
        r["mb_per_s"] = nbytes / r["seconds"] / 1e6
        r["peak_rss_kib"] = max(x["peak_rss_kib"] for x in r["runs"])
        bad = [x for x in r["runs"] if x["objects"] != count or x["bytes"] != nbytes]
        ok = ok and not bad
        note = "".join(f"  INCOMPLETE: a bucket held {x['objects']} objects, {x['bytes']} bytes" for x in bad[:1])
        cmd = "rclone copy" if tool == "rclone" else "mediactl migrate"
        print(f"    {cmd:<17} {r['seconds']:8.2f} s  {r['mb_per_s']:7.1f} MB/s  (runs {min(secs):.1f}-{max(secs):.1f} s)  peak RSS {r['peak_rss_kib'] / 1024:5.0f} MiB{note}")
    if "rclone" in tools and "mediactl" in tools:
        ratio = tools["mediactl"]["mb_per_s"] / tools["rclone"]["mb_per_s"]
        tools["ratio_mediactl_rclone"] = ratio
        print(f"    ratio mediactl/rclone {ratio:.2f} (throughput; above 1 means mediactl is faster)")
        # Run i of each tool went back to back: their ratio is free of the machine's drift.
        pairs = [r["seconds"] / m["seconds"] for m, r in zip(tools["mediactl"]["runs"], tools["rclone"]["runs"])]
        tools["pair_ratios"] = pairs
        print(f"    ratio in each pair of runs: {' '.join(f'{x:.2f}' for x in pairs)}")
    out["sets"][set_] = dict(blobs=count, bytes=nbytes, **tools)
json.dump(out, open("bench/out/migrate.json", "w"), indent=2)
sys.exit(0 if ok else 1)
PY
