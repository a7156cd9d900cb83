#!/usr/bin/env bash
# bench/reconcile.sh — what the check after the moves costs gc --delete when nothing
# changed during the run: `mediactl gc --delete` (refcount, into the trash) of this
# build against the build of BASE_REF (default 8fa6bfe, the last commit before gc read
# the sessions again after its moves), on identical copies of the bench/gc.sh tree of
# $N blobs (default 1,000,000; half referenced, half orphans), taking turns, $RUNS
# times each (default 3). Target: this build <= 1.10x the base.
#
# Each run works on a hard-linked copy (cp -al) of the store, made before the timer
# starts (gc renames blobs into its trash: the original's names stay), so both builds
# remove the same 500,000 orphans; the sessions are read where they are, left
# untouched since they were made: nothing changes during the run, which is the case the
# target is for. (A copy of the sessions would give every file a new change time, and the
# check after the moves would read them all again: the worst case, REREAD_ALL=1.)
#
# Needs: go, git, /usr/bin/time (apt-get install -y time).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
N=${N:-1000000}
RUNS=${RUNS:-3}
BASE_REF=${BASE_REF:-8fa6bfe}
command -v /usr/bin/time >/dev/null || { echo "bench/reconcile.sh: /usr/bin/time missing: apt-get install -y time" >&2; exit 2; }
mkdir -p "$BENCH_DIR"
new="$BENCH_DIR/mediactl"
base="$BENCH_DIR/mediactl-$BASE_REF"
go build -o "$new" ./cmd/mediactl
if [ ! -x "$base" ]; then
  wt="$BENCH_DIR/base-src"
  rm -rf "$wt"
  git worktree add -f --detach "$wt" "$BASE_REF" >/dev/null
  (cd "$wt" && go build -o "$base" ./cmd/mediactl)
  git worktree remove --force "$wt"
fi

work="$BENCH_DIR/gc-$N"
if [ ! -f "$work/.done" ]; then
  rm -rf "$work"
  size=$(( N * 640 ))
  go run ./bench/gensessions -dir "$work" -size "$size" -distinct $(( N / 2 )) -blobs "$N" -prose 60 -blob-age 1000h
  touch "$work/.done"
fi

# The check after the moves reads again what changed since its first read began, less
# 10 minutes: sessions younger than that are all read again.
sessions="$work/.forge/sessions"
if [ -z "${REREAD_ALL:-}" ]; then
  newest=$(find "$sessions" -printf '%C@\n' | sort -n | tail -n 1)
  wait_s=$(python3 -c "import time,sys; print(max(0, int(float(sys.argv[1]) + 11*60 - time.time())))" "$newest")
  if [ "$wait_s" -gt 0 ]; then
    echo "bench/reconcile.sh: the sessions changed less than 11 minutes ago; waiting ${wait_s}s" >&2
    sleep "$wait_s"
  fi
fi
copy="$BENCH_DIR/reconcile-copy"
run() { # run BIN LABEL: one gc --delete on a fresh copy; prints its seconds
  rm -rf "$copy"
  cp -al "$work/.forge/files/inbound" "$copy"
  if [ -n "${REREAD_ALL:-}" ]; then
    rm -rf "$copy.sessions"; cp -a "$sessions" "$copy.sessions"; s="$copy.sessions"
  else
    s="$sessions"
  fi
  sync
  /usr/bin/time -f "%e" -o "$BENCH_DIR/reconcile.time" \
    "$1" gc --store "$copy" --sessions "$s" --delete --max-delete 100% -q --no-progress -o json > "$BENCH_DIR/reconcile-$2.json"
  cat "$BENCH_DIR/reconcile.time"
}
declare -a tb tn
for i in $(seq 1 "$RUNS"); do
  if (( i % 2 )); then tb+=("$(run "$base" base)"); tn+=("$(run "$new" new)")
  else tn+=("$(run "$new" new)"); tb+=("$(run "$base" base)"); fi
done
rm -rf "$copy" "$copy.sessions"
python3 - "$N" "$(nproc)" "$BASE_REF" "${tb[*]}" "${tn[*]}" "$BENCH_DIR/reconcile-new.json" <<'PY'
import json, statistics, sys
n, cpus, ref, tb, tn, doc = sys.argv[1:]
tb = [float(x) for x in tb.split()]; tn = [float(x) for x in tn.split()]
s = json.load(open(doc))["stores"][0]
tc = s.get("trash_check") or {}
mb, mn = statistics.median(tb), statistics.median(tn)
print(f"gc --delete with the check after the moves ({cpus} CPUs), {n} blobs, {s['result']['trashed']} moved, {len(tc.get('restored', []))} put back")
print(f"  base {ref}: {' '.join(f'{x:.2f}' for x in tb)} s (median {mb:.2f})")
print(f"  this build:  {' '.join(f'{x:.2f}' for x in tn)} s (median {mn:.2f})")
print(f"  ratio this/base {mn/mb:.3f} (target <= 1.10)")
PY
