#!/usr/bin/env bash
# bench/bucket.sh — mediactl gc and verify on a bucket against rclone, on the same
# S3 server (SeaweedFS on 127.0.0.1), in one run.
#
# 1. Generates (once, cached in $BENCH_DIR) 4,000 content-addressed blobs of 100 KiB
#    with bench/genblobs and uploads them once into a seed bucket (rclone copy
#    --transfers 32); a session file refers to 10 of them.
# 2. Uses the SeaweedFS named by MEDIACTL_TEST_SEAWEEDFS (and _KEY, _SECRET) when it
#    answers, else the one of scripts/services/seaweedfs.sh in $BENCH_DIR/seaweedfs,
#    starting it (a first start builds it: about 5 minutes).
# 3. $RUNS times (default 3), on identical copies of the seed bucket (server-side
#    copies, made before any timing):
#      rclone delete w:COPY --checkers 8                              (4,000 removed)
#      mediactl gc --store s3://COPY?… --sessions S --min-age 0 --delete --no-trash
#      mediactl gc --store s3://COPY?… --sessions S --min-age 0 --delete --copy-to-trash
#      mediactl gc --store s3://COPY?… --sessions S --min-age 0 --delete   (marks only)
#      mediactl gc … --delete --grace 1s, on that copy a second later (deletes the marked)
#    (3,990 removed each: the 10 referenced blobs must still be there, and with the
#    trash the 3,990 others must be in .mediactl/trash; after the marking run all
#    4,000 are still there), and on the seed bucket
#      rclone hashsum sha256 --download --checkers 8 w:SEED
#      mediactl verify --store s3://SEED?…                            (full download)
#    the tools taking turns to go first, each timed under /usr/bin/time (wall time,
#    peak RSS). Reports the median throughput (objects/s) of each, and the ratios
#    mediactl/rclone; all runs go to bench/out/bucket.json.
# 4. In the same runs, the server's own rates, by bench/s3rate (the bare AWS SDK: one
#    listing, then nothing but the requests): on a fourth copy CopyObject of every
#    object 32 at a time, then DeleteObjects of 500 keys 8 at a time; on the seed
#    GetObject + sha256 32 at a time. No client of that server goes faster, so
#    mediactl's share of each ceiling is reported beside its ratio to rclone (the
#    trash's ceiling: the copy and the delete one after the other).
#
#   bench/bucket.sh               # RUNS=3
#   RUNS=5 bench/bucket.sh
#   JOBS=64 bench/bucket.sh       # mediactl --jobs 64 (default: its own default)
#
# Needs: go, rclone and /usr/bin/time (installed with apt-get when missing and run as
# root). Debian's rclone fails when AWS_CA_BUNDLE is set, so it runs without it.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
RUNS=${RUNS:-3}
JOBS=${JOBS:-}
N=4000
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "bench/bucket.sh: RUNS=$RUNS is not a positive number" >&2; exit 2; }
[[ -z $JOBS || $JOBS =~ ^[1-9][0-9]*$ ]] || { echo "bench/bucket.sh: JOBS=$JOBS is not a positive number" >&2; exit 2; }

. bench/lib.sh
need rclone rclone
need /usr/bin/time time

mkdir -p "$BENCH_DIR" bench/out
exec 8>"$BENCH_DIR/bucket.lock"
if ! flock -n 8; then
  echo "bench/bucket.sh: waiting for another run to finish" >&2
  flock 8
fi
bin="$BENCH_DIR/mediactl"
go build -o "$bin" ./cmd/mediactl
go build -o "$BENCH_DIR/s3rate" ./bench/s3rate

blobs="$BENCH_DIR/bucket-blobs"
if [ ! -f "$blobs.done" ]; then
  rm -rf "$blobs"; go run ./bench/genblobs -dir "$blobs" -count $N -min 100KiB -max 100KiB; touch "$blobs.done"
fi
# The session: forge's shape, naming 10 blobs by their digest.
sessions="$BENCH_DIR/bucket-sessions"
rm -rf "$sessions"; mkdir -p "$sessions"
mapfile -t kept < <(cd "$blobs" && ls | sort | awk 'NR % 400 == 1')
{
  printf '{\n  "messages": [\n'
  for ((k = 0; k < ${#kept[@]}; k++)); do
    sep=,; ((k == ${#kept[@]} - 1)) && sep=
    printf '    {\n      "role": "user",\n      "content": "see sha256:%s"\n    }%s\n' "${kept[k]%.bin}" "$sep"
  done
  printf '  ]\n}\n'
} >"$sessions/session.json"

seaweedfs_up --or-test-server
url() { s3url "$1"; }

run_id=$(date +%s)
seed="bench-bucket-seed"

count() { rclone size "w:$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])'; }
if [ "$(count "$seed" 2>/dev/null || echo 0)" != $N ]; then
  echo "bench/bucket.sh: uploading $N blobs into $seed" >&2
  rclone purge "w:$seed" >/dev/null 2>&1 || true
  rclone mkdir "w:$seed"
  rclone copy "$blobs" "w:$seed" --transfers 32 --exclude '.mediactl/**'
  [ "$(count "$seed")" = $N ] || die "the seed bucket does not hold $N blobs"
fi

results="$BENCH_DIR/bucket-results.txt"
: >"$results"

# timed NAME RUN CMD...: runs CMD under /usr/bin/time, appends "NAME RUN seconds peak_kib".
timed() {
  local name=$1 i=$2; shift 2
  local log="$BENCH_DIR/bucket-$name"
  /usr/bin/time -f "%e %M" -o "$log.time" "$@" >"$log.out" 2>"$log.err" ||
    { tail -n 20 "$log.err" >&2; die "$name (run $i) failed; see $log.err"; }
  echo "$name $i $(cat "$log.time")" >>"$results"
}

# gc_args BUCKET: the arguments of a gc run that removes what no session names.
gc_args() {
  echo gc --store "$(url "$1")" --sessions "$sessions" --min-age 0 --delete --max-delete 100% -q --no-progress -o json ${JOBS:+--jobs "$JOBS"}
}

for ((i = 1; i <= RUNS; i++)); do
  copies=()
  for tool in rclone-delete gc-notrash gc-trash server gc-mark; do
    b="bench-bucket-$tool-$run_id-$i"
    bench_buckets+=("$b")
    copies+=("$b")
    rclone copy "w:$seed" "w:$b" --transfers 32
  done
  for b in "${copies[@]}"; do
    [ "$(count "$b")" = $N ] || die "$b, a copy of $seed, does not hold $N blobs"
  done
  echo "bench/bucket.sh: run $i of $RUNS" >&2
  order=(0 1 2 3 4)
  ((i % 2)) || order=(4 3 2 1 0)
  for k in "${order[@]}"; do
    case $k in
      0) timed rclone-delete "$i" env -u AWS_CA_BUNDLE rclone --config /dev/null delete "w:${copies[0]}" --checkers 8 ;;
      1) timed gc-notrash "$i" "$bin" $(gc_args "${copies[1]}") --no-trash ;;
      2) timed gc-trash "$i" "$bin" $(gc_args "${copies[2]}") --copy-to-trash ;;
      4) timed gc-mark "$i" "$bin" $(gc_args "${copies[4]}")
         [ "$(rclone lsf -R --files-only "w:${copies[4]}" --exclude '.mediactl/**' | wc -l)" = $N ] || die "the marking run removed blobs from ${copies[4]}"
         sleep 1.1
         timed gc-marked-delete "$i" "$bin" $(gc_args "${copies[4]}") --grace 1s ;;
      3) timed server-copy "$i" "$BENCH_DIR/s3rate" -endpoint "$endpoint" -bucket "${copies[3]}" -op copy
         timed server-delete "$i" "$BENCH_DIR/s3rate" -endpoint "$endpoint" -bucket "${copies[3]}" -op delete ;;
    esac
  done
  # What is left: nothing after rclone, the 10 referenced blobs after gc.
  [ "$(count "${copies[0]}")" = 0 ] || die "rclone delete left blobs in ${copies[0]}"
  for b in "${copies[1]}" "${copies[2]}" "${copies[4]}"; do
    left=$(rclone lsf "w:$b" --exclude '.mediactl/**' | sort)
    [ "$left" = "$(printf '%s\n' "${kept[@]}")" ] || die "gc left in $b: $(wc -l <<<"$left") blobs, not the ${#kept[@]} referenced ones"
  done
  trashed=$(rclone lsf -R --files-only "w:${copies[2]}/.mediactl/trash" | grep -c '\.bin$' || true)
  [ "$trashed" = $((N - ${#kept[@]})) ] || die "the trash of ${copies[2]} holds $trashed blobs, want $((N - ${#kept[@]}))"
  vorder=(hash verify server)
  ((i % 2)) || vorder=(server verify hash)
  for v in "${vorder[@]}"; do
    case $v in
      hash) timed rclone-hashsum "$i" env -u AWS_CA_BUNDLE rclone --config /dev/null hashsum sha256 --download --checkers 8 "w:$seed" ;;
      verify) timed verify "$i" "$bin" verify --store "$(url "$seed")" ${JOBS:+--jobs "$JOBS"} -q --no-progress -o json ;;
      server) timed server-get "$i" "$BENCH_DIR/s3rate" -endpoint "$endpoint" -bucket "$seed" -op get ;;
    esac
  done
  [ "$(wc -l <"$BENCH_DIR/bucket-rclone-hashsum.out")" = $N ] || die "rclone hashsum listed $(wc -l <"$BENCH_DIR/bucket-rclone-hashsum.out") blobs"
  python3 - "$BENCH_DIR/bucket-verify.out" $N <<'PY' || die "mediactl verify did not find every blob OK"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["stores"][0]["counts"]["ok"] == int(sys.argv[2]) else 1)
PY
  for b in "${copies[@]}"; do rclone purge "w:$b" >/dev/null 2>&1 || true; done
done

python3 - "$results" $N ${#kept[@]} "$RUNS" "$(nproc)" "$(env -u AWS_CA_BUNDLE rclone version 2>/dev/null | head -n 1)" "${JOBS:-default}" <<'PY'
import json, statistics, sys
results, n, kept, runs, cpus, rversion, jobs = sys.argv[1:]
n, kept = int(n), int(kept)
removed = {"rclone-delete": n, "gc-notrash": n - kept, "gc-trash": n - kept, "gc-mark": n - kept, "gc-marked-delete": n - kept, "rclone-hashsum": n, "verify": n,
           "server-copy": n, "server-delete": n, "server-get": n}
rows = {}
for line in open(results):
    name, i, secs, kib = line.split()
    rows.setdefault(name, []).append({"run": int(i), "seconds": float(secs), "peak_rss_kib": int(kib),
                                      "objects_per_s": removed[name] / float(secs)})
med = {k: statistics.median(r["objects_per_s"] for r in v) for k, v in rows.items()}
rss = {k: max(r["peak_rss_kib"] for r in v) for k, v in rows.items()}
print(f"bucket benchmark ({cpus} CPUs), SeaweedFS on 127.0.0.1, {n} objects of 100 KiB, median of {runs} runs, mediactl --jobs {jobs}")
print(f"  {rversion}")
for k in ["rclone-delete", "gc-notrash", "gc-trash", "gc-mark", "gc-marked-delete", "rclone-hashsum", "verify", "server-delete", "server-copy", "server-get"]:
    secs = statistics.median(r["seconds"] for r in rows[k])
    each = ", ".join("%.2f" % r["seconds"] for r in rows[k])
    print(f"    {k:15s} {secs:7.2f} s  {med[k]:7.0f} objects/s  peak RSS {rss[k] // 1024} MiB   (runs: {each} s)")
ratios = {
    "gc --no-trash / rclone delete": (med["gc-notrash"] / med["rclone-delete"], 3.0),
    "gc (trash) / rclone delete": (med["gc-trash"] / med["rclone-delete"], 1.0),
    "gc (marks) / rclone delete": (med["gc-mark"] / med["rclone-delete"], 3.0),
    "verify / rclone hashsum --download": (med["verify"] / med["rclone-hashsum"], 2.0),
}
for k, (r, target) in ratios.items():
    print(f"  {k:36s} {r:5.2f}x (target >= {target})")
# The server's ceilings, as the bare SDK reached them; the trash's is its copy and
# its delete one after the other, run by run.
trash = statistics.median(n / (c["seconds"] + d["seconds"]) for c, d in zip(rows["server-copy"], rows["server-delete"]))
ceilings = {
    "gc --no-trash": (med["gc-notrash"], med["server-delete"], "DeleteObjects"),
    "gc (trash)": (med["gc-trash"], trash, "CopyObject, then DeleteObjects"),
    "gc (marked, deleted)": (med["gc-marked-delete"], med["server-delete"], "DeleteObjects; the run also lists and reads the sessions"),
    "verify": (med["verify"], med["server-get"], "GetObject + sha256"),
}
print("  the server's own rate (bench/s3rate, the bare SDK), and mediactl's share of it:")
for k, (rate, ceiling, how) in ceilings.items():
    print(f"    {k:15s} {rate:7.0f} of {ceiling:5.0f} objects/s = {100 * rate / ceiling:3.0f}%   ({how}; the ceiling is {ceiling / med['rclone-hashsum' if k == 'verify' else 'rclone-delete']:.2f}x rclone)")
json.dump({"objects": n, "referenced": kept, "runs": int(runs), "cpus": int(cpus), "rclone": rversion, "jobs": jobs,
           "results": rows, "median_objects_per_s": med, "ratios": {k: v[0] for k, v in ratios.items()},
           "server_ceiling_objects_per_s": {k: v[1] for k, v in ceilings.items()}},
          open("bench/out/bucket.json", "w"), indent=2)
PY
