#!/usr/bin/env bash
# bench/gc.sh — mediactl gc on a store of $N small blobs (default 1,000,000) with sessions
# holding about as many references (half the blobs referenced, half orphans).
#
# Reports, in the same run:
#   - the refcount dry-run plan: wall time and peak RSS, and RSS per blob
#     (target: <= 150 bytes per blob);
#   - `mediactl gc --policy age --max-age 30d --delete` (into the trash) against
#     `find DIR -type f -mtime +30 -delete` on an identical copy of the store
#     (target: <= 1.5x find). Both copies are full copies (cp -a): a hard-linked
#     copy would let find's unlink skip freeing the files.
#   - the same with --no-trash (each blob moved out by the rename that checks it,
#     then deleted: two operations per file where find makes one), on a third copy.
#
# Needs: go, /usr/bin/time (apt-get install -y time).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
N=${N:-1000000}
command -v /usr/bin/time >/dev/null || { echo "bench/gc.sh: /usr/bin/time missing: apt-get install -y time" >&2; exit 2; }
mkdir -p "$BENCH_DIR" bench/out
bin="$BENCH_DIR/mediactl"
go build -o "$bin" ./cmd/mediactl

work="$BENCH_DIR/gc-$N"
if [ ! -f "$work/.done" ]; then
  rm -rf "$work"
  # ~640 bytes of session per reference with 60-byte prose: N references.
  size=$(( N * 640 ))
  go run ./bench/gensessions -dir "$work" -size "$size" -distinct $(( N / 2 )) -blobs "$N" -prose 60 -blob-age 1000h
  touch "$work/.done"
fi

/usr/bin/time -v "$bin" gc --layout forge --root "$work" --max-delete 100% -q --no-progress -o json \
  > "$BENCH_DIR/gc-plan.json" 2> "$BENCH_DIR/gc-plan.time"
plan_s=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$BENCH_DIR/gc-plan.time")
plan_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$BENCH_DIR/gc-plan.time")
read -r blobs cands refs < <(python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))["stores"][0]["plan"]
print(d["blobs"], len(d["candidates"]), d["scan"]["references"])' "$BENCH_DIR/gc-plan.json")

a="$BENCH_DIR/gc-age-mediactl" b="$BENCH_DIR/gc-age-find" c="$BENCH_DIR/gc-age-notrash"
rm -rf "$a" "$b" "$c"
cp -a "$work/.forge/files/inbound" "$a"
cp -a "$work/.forge/files/inbound" "$b"
cp -a "$work/.forge/files/inbound" "$c"
sync
/usr/bin/time -f "%e" -o "$BENCH_DIR/gc-age-mediactl.time" \
  "$bin" gc --store "$a" --policy age --max-age 30d --delete --max-delete 100% -q --no-progress
/usr/bin/time -f "%e" -o "$BENCH_DIR/gc-age-find.time" find "$b" -type f -mtime +30 -delete
/usr/bin/time -f "%e" -o "$BENCH_DIR/gc-age-notrash.time" \
  "$bin" gc --store "$c" --policy age --max-age 30d --delete --no-trash --max-delete 100% -q --no-progress
left_a=$(find "$a" -path "$a/.mediactl" -prune -o -type f -print | wc -l)
left_b=$(find "$b" -type f | wc -l)
left_c=$(find "$c" -type f | wc -l)
rm -rf "$a" "$b" "$c"

python3 - "$N" "$blobs" "$cands" "$refs" "$plan_s" "$plan_kb" "$(cat "$BENCH_DIR/gc-age-mediactl.time")" "$(cat "$BENCH_DIR/gc-age-find.time")" "$left_a" "$left_b" "$(nproc)" \
  "$(cat "$BENCH_DIR/gc-age-notrash.time")" "$left_c" <<'PY'
import sys
n, blobs, cands, refs, plan_s, plan_kb, ma, fi, la, lb, cpus, nt, lc = sys.argv[1:]
n, blobs, cands, refs, plan_kb, la, lb, lc = map(int, (n, blobs, cands, refs, plan_kb, la, lb, lc))
ma, fi, nt = float(ma), float(fi), float(nt)
print(f"gc benchmark ({cpus} CPUs), {blobs} blobs, sessions holding {refs} references")
print(f"  refcount plan (dry run): {plan_s} wall, peak RSS {plan_kb/1024:.0f} MiB = {plan_kb*1024/blobs:.0f} bytes per blob (target <= 150); {cands} candidates")
print(f"  age policy --delete (into the trash): {ma:.2f} s, {la} files left in the store")
print(f"  find -type f -mtime +30 -delete:      {fi:.2f} s, {lb} files left")
print(f"  age policy --delete --no-trash:       {nt:.2f} s, {lc} files left (the store and its emptied trash run)")
print(f"  ratio mediactl/find {ma/fi:.2f} (target <= 1.5); --no-trash/find {nt/fi:.2f}")
PY
