#!/usr/bin/env bash
# bench/live.sh — a soak test: `mediactl gc --delete` and `mediactl gc purge` beside a live
# forge-style runtime (bench/livewriter) that re-uses old blobs and saves new sessions.
#
# For each min-age of $MIN_AGES (default "0s 24h": 0 is the harshest case, 24h gc's
# default) it runs two rounds: the writer storing forge's way (a blob of the same bytes
# present: the write is skipped and the old blob keeps its old time), then with -freshen
# (pkg/persist's Put freshens it). Each round:
#   1. writes a fresh forge work dir: $BLOBS old blobs (default 2,000 of 1-8 KiB, mtime
#      3 days ago) and $SESSIONS sessions (default 500) naming a random half of them;
#   2. starts the writer ($WORKERS users, default 4, turns of 0-$TURN_MAX, default 5s) and
#      the checker (bench/livewriter -check: every 50 ms, every blob a present session
#      names must be in inbound/; one in the trash counts as missing);
#   3. runs $ROUNDS times (default 50, spread over $DURATION seconds, default 50)
#      `gc --layout forge --root R --delete --min-age AGE --max-delete 100%`, then
#      `gc purge --keep-within 0`, each with -q --no-progress -o json, recording each exit
#      code: 0 is expected, 3 is accepted (and counted) only when its problems name a
#      session file caught mid-write (a `.json.tmp`), anything else fails the round;
#   4. stops the writer (it finishes the turns under way), runs one last gc --delete and
#      purge, stops the checker, and checks that every blob named by every session present
#      is in inbound/. A blob missing then, or one that went missing while a session named
#      it and never came back before the writer deleted that session, fails the round;
#      each is traced through the writer's log and the gc runs' plans.
# The instantaneous check is expected to find outages without -freshen, and at min-age 0
# with it too (a blob freshened is older than 0s at once): only their count is reported.
# The script exits 1 when any round failed, after all rounds ran.
#
# QUICK=1: small sizes, 6 gc runs over 6 s per round, well under a minute. Logs, each
# mediactl run's JSON and the work dirs stay in $BENCH_DIR/live (default
# /tmp/mediactl-bench/live) until the next run.
#
# Needs: go, python3.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
if [ "${QUICK:-0}" = 1 ]; then
  ROUNDS=${ROUNDS:-6} DURATION=${DURATION:-6} BLOBS=${BLOBS:-300} SESSIONS=${SESSIONS:-75} TURN_MAX=${TURN_MAX:-1s}
else
  ROUNDS=${ROUNDS:-50} DURATION=${DURATION:-50} BLOBS=${BLOBS:-2000} SESSIONS=${SESSIONS:-500} TURN_MAX=${TURN_MAX:-5s}
fi
MIN_AGES=${MIN_AGES:-0s 24h}
KEEP_WITHIN=${KEEP_WITHIN:-0} # gc purge --keep-within: 0 purges each run at once, the harshest case
WORKERS=${WORKERS:-4}
SEED=${SEED:-1}
LIMIT=${LIMIT:-600} # seconds: each mediactl run's timeout
command -v python3 >/dev/null || { echo "bench/live.sh: python3 missing" >&2; exit 2; }

work="$BENCH_DIR/live"
rm -rf "$work"
mkdir -p "$work"
bin="$work/mediactl" lw="$work/livewriter"
go build -o "$bin" ./cmd/mediactl
go build -o "$lw" ./bench/livewriter

pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# gen ROOT SEED: a forge work dir with $BLOBS old blobs and $SESSIONS sessions naming half.
gen() {
  python3 - "$1" "$BLOBS" "$SESSIONS" "$2" <<'PY'
import hashlib, json, os, random, sys
root, nblobs, nsess, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
inbound = os.path.join(root, ".forge", "files", "inbound")
sessions = os.path.join(root, ".forge", "sessions")
os.makedirs(inbound, 0o700); os.makedirs(sessions, 0o700)
paths = []
for i in range(nblobs):
    b = b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randint(1024, 8192) - 8)
    p = os.path.join(inbound, hashlib.sha256(b).hexdigest() + ".png")
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b); os.close(fd)
    paths.append(p)
named = rng.sample(paths, len(paths) // 2)
per = [named[i::nsess] for i in range(nsess)]  # every named blob in one session at least
q = "What's in this image?"
for i, blobs in enumerate(per):
    blobs = blobs + rng.sample(named, rng.randint(0, 2))
    msgs = []
    for b in blobs:
        msgs.append({"role": "user", "content": q, "parts": [{"type": "text", "text": q},
                     {"type": "image", "media": {"mimeType": "image/png", "uri": b}}]})
    doc = {"task_id": f"t-{i}", "messages": msgs,
           "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
    with open(os.path.join(sessions, f"t-{i}.json"), "w") as f:
        json.dump(doc, f, indent=2)
PY
  find "$1/.forge" -type f -exec touch -d '3 days ago' {} +
}

failed=0
results=()

# mc KIND I ARGS...: one mediactl run, its JSON in $logs, its exit code and times appended to
# $logs/codes; gcrun I: gc --delete then purge on $root with gc --min-age $age (the
# variables of the round under way).
mc() {
  local kind=$1 i=$2; shift 2
  local rc=0 t0
  t0=$(date +%H:%M:%S.%N)
  timeout "$LIMIT" "$bin" "$@" -q --no-progress -o json >"$logs/$kind-$i.json" 2>"$logs/$kind-$i.err" || rc=$?
  echo "$kind $i $rc $t0 $(date +%H:%M:%S.%N)" >>"$logs/codes"
}
gcrun() {
  mc gc "$1" gc --layout forge --root "$root" --delete --min-age "$age" --max-delete 100%
  mc purge "$1" gc purge --store "$root/.forge/files/inbound" --sessions "$root/.forge/sessions" --keep-within "$KEEP_WITHIN"
}

# round NAME FRESHEN(true|false) MIN_AGE
round() {
  local name=$1 freshen=$2 age=$3
  local root="$work/$name" logs="$work/$name.logs"
  mkdir -p "$logs"
  gen "$root" "$SEED"
  # Their own timeouts: the writer is stopped when the gc runs are done, and stops by
  # itself a minute after it is due; the checker five minutes after.
  local wflags=(-root "$root" -duration "$((DURATION + 60))s" -workers "$WORKERS" -turn-max "$TURN_MAX" -seed "$SEED" -log "$logs/writer.tsv")
  $freshen && wflags+=(-freshen)
  local start=$SECONDS
  "$lw" -check "$root" -duration "$((DURATION + 300))s" -log "$logs/outages.log" 2>"$logs/checker.txt" &
  local checker=$!
  pids+=("$checker")
  "$lw" "${wflags[@]}" 2>"$logs/writer.txt" &
  local writer=$!
  pids+=("$writer")

  sleep 1 # the writer under way
  # The $ROUNDS runs are spread over $DURATION seconds: run i does not start before
  # (i-1)*DURATION/ROUNDS; one that is late starts at once.
  local i t0us due now
  t0us=${EPOCHREALTIME/./}
  for ((i = 1; i <= ROUNDS; i++)); do
    due=$((t0us + (i - 1) * DURATION * 1000000 / ROUNDS))
    now=${EPOCHREALTIME/./}
    if ((due > now)); then sleep "$(printf '%d.%06d' $(((due - now) / 1000000)) $(((due - now) % 1000000)))"; fi
    gcrun "$i"
  done
  kill -TERM "$writer" 2>/dev/null || true
  local wrc=0
  wait "$writer" || wrc=$?
  local secs=$((SECONDS - start))
  gcrun final
  kill -TERM "$checker" 2>/dev/null || true
  wait "$checker" || true
  pids=()
  "$lw" -check "$root" -once >"$logs/end.txt"

  local out
  out=$(python3 - "$logs" "$name" "$age" "$secs" "$wrc" <<'PY'
import glob, json, os, re, sys
logs, name, age, secs, wrc = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def sec(t):  # HH:MM:SS.frac (local time) -> seconds of the day
    h, m, s = t.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)
codes = [l.split() for l in open(os.path.join(logs, "codes"))]
bad, midwrite = [], 0
n = {"gc": 0, "purge": 0}
restored = {"gc": 0, "purge": 0}
trashed = 0
runs = []  # (kind, i, t0, t1, candidate keys, restored keys)
for kind, i, rc, t0, t1 in codes:
    rc = int(rc)
    n[kind] += 1
    path = os.path.join(logs, f"{kind}-{i}.json")
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        doc = {}
    stores = doc.get("stores") or []
    checks = [doc.get("trash_check")] if kind == "purge" else [s.get("trash_check") for s in stores]
    back = [r["key"] for c in checks if c for r in c.get("restored") or []]
    restored[kind] += len(back)
    cands = set()
    for s in stores:
        trashed += (s.get("result") or {}).get("trashed", 0)
        cands |= {c["key"] for c in ((s.get("plan") or {}).get("candidates") or [])}
    runs.append((kind, i, sec(t0), sec(t1), cands, set(back), t0, t1))
    if rc == 0:
        continue
    # What it said: every "error" and "refused" string and every string of a
    # "problems" list in its JSON, and its stderr.
    said = []
    def walk(v, k=""):
        if isinstance(v, dict):
            for kk, vv in v.items():
                walk(vv, kk)
        elif isinstance(v, list):
            for vv in v:
                walk(vv, k)
        elif isinstance(v, str) and k in ("error", "refused", "problems") and v not in said:
            said.append(v)
    walk(doc)
    err = open(path[:-5] + ".err").read().strip()
    if err:
        said.append(err)
    text = "; ".join(said) or "(nothing said)"
    if rc == 3 and re.search(r"\.json\.tmp", text):
        midwrite += 1
        print(f"  note: {kind} #{i} exit 3, a session caught mid-write: {text[:300]}")
    else:
        bad.append(f"{kind} #{i} exit {rc}")
        print(f"  FAIL: {kind} #{i} ({t0}-{t1}) exit {rc}: {text[:300]}")

# The writer's log: stored, saved, deleted, how, session, blob.
saved = {}
for l in open(os.path.join(logs, "writer.tsv")):
    if not l.startswith("#"):
        st, sv, dl, how, sess, blob = l.rstrip("\n").split("\t")
        saved[sess] = (st, sv, how, blob)

end = open(os.path.join(logs, "end.txt")).read().splitlines()
m = re.match(r"sessions (\d+) named-blobs (\d+) missing (\d+)", end[0])
sess, named, missing = map(int, m.groups())
suspect = 0
def diagnose(blob, s):
    """Prints how a blob a session named came to be missing; returns 1 when the
    timeline does not explain it (the session saved before the purge that took it)."""
    key = os.path.basename(blob)
    if s not in saved:
        print(f"    {s} is not the writer's: named since the start: SUSPECT")
        return 1
    st, sv, how, _ = saved[s]
    print(f"    the writer stored it at {st} ({how}) and saved the session at {sv}")
    took = [r for r in runs if r[0] == "gc" and key in r[4]]
    for r in runs:
        if key in r[4]:
            print(f"    gc #{r[1]} ({r[6]}-{r[7]}) planned it")
        if key in r[5]:
            print(f"    {r[0]} #{r[1]} ({r[6]}-{r[7]}) restored it")
    if not took:
        print("    no gc run planned it: SUSPECT")
        return 1
    g = took[-1]
    purge = next((r for r in runs if r[0] == "purge" and r[2] >= g[3]), None)
    if purge is None:
        print("    no purge after the gc that took it: SUSPECT")
        return 1
    if sec(sv) < purge[2]:
        print(f"    purge #{purge[1]} ({purge[6]}-{purge[7]}) started after the session was saved, and did not put it back: SUSPECT")
        return 1
    print(f"    purge #{purge[1]} ({purge[6]}-{purge[7]}) deleted it for good before the session was saved: "
          f"the session came {sec(sv) - sec(st):.2f} s after the store, gc's min-age is {age}")
    return 0
for l in end[1:]:
    print("  MISSING AT THE END: " + l)
    mm = re.match(r"missing (\S+) named by (\S+)", l)
    suspect += diagnose(mm.group(1), mm.group(2))
for l in open(os.path.join(logs, "outages.log")):
    f = l.rstrip("\n").split("\t")
    if len(f) == 8 and f[5].startswith("session deleted"):
        print(f"  LOST WHILE NAMED: {f[7]} named by {f[6]}, missing from {f[1]} until the session's deletion at {f[2]}")
        suspect += diagnose(f[7], f[6])

# Exposure: the re-uses (skipped or freshened) that a gc run could have taken had the
# write been skipped: the blob named by no session from the store to the session's save
# (the run's own sessions t-*.json are never deleted), older than the min-age (a blob of
# the generator, or one the writer wrote at least min-age before), and a gc run started
# in between.
def dur(a):
    mult = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return sum(float(v) * mult[u] for v, u in re.findall(r"([0-9.]+)([smhd])", a))
minage = dur(age)
root = os.path.dirname(logs.rstrip("/")) + "/" + name
initial_named = set()
for f in glob.glob(os.path.join(root, ".forge", "sessions", "t-*.json")):
    d = json.load(open(f))
    initial_named |= {p["media"]["uri"] for m in d["messages"] for p in m.get("parts", []) if p.get("media")}
lives = {}  # blob -> [(saved, deleted)]
first_write = {}
rows = []
for l in open(os.path.join(logs, "writer.tsv")):
    if l.startswith("#"):
        continue
    st, sv, dl, how, s, blob = l.rstrip("\n").split("\t")
    st, sv, dl = sec(st), sec(sv), (sec(dl) if dl != "-" else float("inf"))
    lives.setdefault(blob, []).append((sv, dl))
    if how == "written":
        first_write.setdefault(blob, st)
    rows.append((st, sv, how, blob))
gc_starts = [r[2] for r in runs if r[0] == "gc"]
exposed = 0
for st, sv, how, blob in rows:
    if how == "written" or blob in initial_named:
        continue
    if any(a <= st and b >= sv for a, b in lives[blob]):
        continue
    w = first_write.get(blob)
    if w is not None and minage > 0 and w > st - minage:
        continue
    if any(st <= t <= sv for t in gc_starts):
        exposed += 1

chk = open(os.path.join(logs, "checker.txt")).read().strip()
mi = re.search(r"(\d+) polls, (\d+) instants with a named blob missing, (\d+) outages .*?, (\d+) by the session's deletion", chk)
polls, instants, outages, hidden = map(int, mi.groups()) if mi else (0, -1, -1, -1)
wr = open(os.path.join(logs, "writer.txt")).read().strip()
print(f"  {wr}")
print(f"  {chk}")
print(f"  gc runs {n['gc']}, purges {n['purge']}, exit 3 (mid-write) {midwrite}, other failures {len(bad)}; "
      f"blobs trashed {trashed}, restored {restored['gc'] + restored['purge']} (by gc {restored['gc']}, by purge {restored['purge']})")
print(f"  re-uses of a blob no session named, older than the min-age, with a gc run started during the turn: {exposed}")
print(f"  end: sessions {sess}, named blobs {named}, missing {missing}; lost while named, then the session deleted {hidden}"
      + (f"; of these {suspect} not explained by the timeline" if missing or hidden else ""))
ok = missing == 0 and hidden == 0 and not bad and wrc == 0
print(f"RESULT {name} {age} {secs} {sess} {named} {missing} {instants} {polls} {outages} {n['gc']} {n['purge']} "
      f"{restored['gc'] + restored['purge']} {midwrite} {len(bad)} {wrc} {suspect} {exposed} {hidden} {'ok' if ok else 'FAIL'}")
PY
)
  local mode="forge's skip"
  $freshen && mode="-freshen"
  echo "round $name: writer $mode, gc --min-age $age, $WORKERS users, turns 0-$TURN_MAX, $secs s with the writer"
  grep -v '^RESULT ' <<<"$out"
  local res
  res=$(grep '^RESULT ' <<<"$out")
  results+=("$res")
  case $res in
    *" ok") ;;
    *) failed=1; echo "  round $name FAILED (writer exit $wrc; see $logs)" ;;
  esac
}

echo "live soak test at $(git describe --always --dirty 2>/dev/null || echo unknown) ($(nproc) CPUs): $BLOBS old blobs, $SESSIONS sessions naming half; per round $ROUNDS gc --delete + purge runs over ${DURATION} s, $WORKERS users, turns 0-$TURN_MAX; gc --min-age: $MIN_AGES; purge --keep-within $KEEP_WITHIN"
for age in $MIN_AGES; do
  round "skip-$age" false "$age"
  round "freshen-$age" true "$age"
done

echo "summary"
printf '  %-12s %7s %8s %6s %7s %8s %6s %7s %6s %7s %6s %6s %8s %7s %6s\n' round min-age sessions named missing instants polls outages "lost*" "gc runs" exit-3 other restored exposed result
for r in "${results[@]}"; do
  read -r _ name age _ sess named missing instants polls outages gcs _ restored mid other _ _ exposed hidden verdict <<<"$r"
  printf '  %-12s %7s %8s %6s %7s %8s %6s %7s %6s %7s %6s %6s %8s %7s %6s\n' "$name" "$age" "$sess" "$named" "$missing" "$instants" "$polls" "$outages" "$hidden" "$gcs" "$mid" "$other" "$restored" "$exposed" "$verdict"
done
echo "  lost*: outages that ended by the session's deletion with the blob still missing (the check at the end cannot see them);"
echo "  exit-3: gc or purge runs that exited 3 on a session caught mid-write; other: any other exit but 0 (each fails its round)"
echo "  exposed: re-uses of an old blob no session named, with a gc run started during the turn (the race -freshen closes)"
exit "$failed"
