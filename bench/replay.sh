#!/usr/bin/env bash
# bench/replay.sh — pkg/replay rehydrating references from SeaweedFS on 127.0.0.1.
#
# Runs BenchmarkSeaweedFS (pkg/replay/bench_test.go): N references (default 1,000) of
# 100 KiB content-addressed blobs, written as migrate writes them, read one per
# operation
#   gocloud      bucket.NewReader + io.Copy(io.Discard), the floor
#   nocache      replay.Open + io.Copy, verified while streaming
#   warmcache    replay.Open with every reference in the cache
#   interleaved  the three in turn for each reference (the order rotating), so that
#                the load of a shared machine falls on all three alike
# $RUNS times (default 3), and prints the median time per reference of each and the
# ratios nocache/gocloud (target ≤ 1.2) and nocache/warmcache (target ≥ 10), from
# the separate runs and from the interleaved ones. It reports; it asserts nothing.
# Raw output goes to bench/out/replay.txt.
#
# Uses the SeaweedFS named by MEDIACTL_TEST_SEAWEEDFS when set; otherwise starts one
# of its own with scripts/services/seaweedfs.sh (run folder $BENCH_DIR/seaweedfs) and
# stops it at the end.
#
#   bench/replay.sh
#   N=300 RUNS=5 bench/replay.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
RUNS=${RUNS:-3}
N=${N:-1000}
die() { echo "bench/replay.sh: $*" >&2; exit 1; }
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS=$RUNS is not a positive number"
[[ $N =~ ^[1-9][0-9]*$ ]] || die "N=$N is not a positive number"
mkdir -p "$BENCH_DIR" bench/out

started=false
if [ -z "${MEDIACTL_TEST_SEAWEEDFS:-}" ]; then
  export SEAWEEDFS_RUN_DIR="$BENCH_DIR/seaweedfs"
  if ! exports=$(scripts/services/seaweedfs.sh status 2>/dev/null); then
    exports=$(scripts/services/seaweedfs.sh start)
    started=true
  fi
  eval "$exports"
fi
cleanup() { if $started; then scripts/services/seaweedfs.sh stop >/dev/null 2>&1 || true; fi; }
trap cleanup EXIT

out=bench/out/replay.txt
MEDIACTL_BENCH_REPLAY_N=$N go test -run '^$' -bench '^BenchmarkSeaweedFS$' -benchtime "${N}x" -count "$RUNS" \
  ./pkg/replay/ | tee "$out"

awk -v n="$N" '
function median(a, k,   i, j, t) {
  for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
/^BenchmarkSeaweedFS\/gocloud/   { g[++ng] = $3 }
/^BenchmarkSeaweedFS\/nocache/   { c[++nc] = $3 }
/^BenchmarkSeaweedFS\/warmcache/ { w[++nw] = $3 }
/^BenchmarkSeaweedFS\/interleaved/ {
  for (i = 4; i < NF; i++) {
    if ($(i + 1) == "gocloud-ns/ref") ig[++nig] = $i
    if ($(i + 1) == "nocache-ns/ref") ic[++nic] = $i
    if ($(i + 1) == "warm-ns/ref") iw[++niw] = $i
    if ($(i + 1) == "nocache/gocloud") r1[++nr1] = $i
    if ($(i + 1) == "nocache/warm") r2[++nr2] = $i
  }
}
END {
  if (!ng || !nc || !nw) { print "bench/replay.sh: no results (is SeaweedFS running?)"; exit 1 }
  G = median(g, ng); C = median(c, nc); W = median(w, nw)
  printf "\n%d references of 100 KiB, median of %d runs (µs per reference)\n", n, ng
  printf "  separate:    gocloud %.0f  nocache %.0f  warm cache %.0f   nocache/gocloud %.2f (target ≤ 1.2)  nocache/warm %.1f× (target ≥ 10)\n", G/1000, C/1000, W/1000, C/G, C/W
  if (nr1) printf "  interleaved: gocloud %.0f  nocache %.0f  warm cache %.0f   nocache/gocloud %.2f                nocache/warm %.1f×\n", median(ig, nig)/1000, median(ic, nic)/1000, median(iw, niw)/1000, median(r1, nr1), median(r2, nr2)
}' "$out"
