#!/usr/bin/env bash
# bench/scan.sh — mediactl scan against ripgrep over the same forge-style session trees.
#
# 1. Generates (once, cached in $BENCH_DIR) two session trees:
#      sparse: $SIZE (default 1 GiB) of mostly prose, 400,000 distinct references;
#      dense:  $DENSE_SIZE (default 640MB) of short messages, each naming a blob
#              (-prose 60: about 0.9 million references, 1.5 per KiB), with the
#              200,000 blobs they name in .forge/files/inbound.
# 2. Times, in the same run and with each tree in page cache:
#      mediactl scan --sessions TREE           (full JSON parse, references with places)
#      rg -o '[0-9a-f]{64}' TREE                (ripgrep's regex over the same bytes)
#    and reports the ratios (targets: sparse <= 1.3, dense <= 1.0). On the dense
#    tree it also times mediactl scan --layout forge --root TREE: every reference
#    resolved against the store and every distinct key stat'ed.
#    With OLD=path/to/an/older/mediactl, that binary is timed beside it on both
#    trees, in the same hyperfine runs.
# 3. Reports mediactl's peak RSS scanning a tree of 1,000,000 distinct references
#    (target: <= 200 MiB) and the dense tree, from /usr/bin/time -v.
#
# 4. Databases (PARTS=db): the messages of bench/scale.sh's 1M tree (1.82 M rows,
#    0.91 M references) in a coffer-style SQLite database (bench/tosqlite) and
#    in a PostgreSQL messages table laid out as agent-runs keeps it (text
#    content, jsonb metadata holding the attachments), in the same hyperfine
#    run:
#      mediactl scan --sessions sqlite:DB        vs  sqlite3 DB .dump | rg -o …
#      mediactl gc --sessions sqlite:DB --store inbound (the refcount plan)
#      mediactl scan --sessions postgres://…     vs  psql -c "COPY messages TO STDOUT" | rg -o …
#      mediactl scan --sessions TREE/.forge/sessions (the same messages as
#        JSON files, with their tool calls: the per-reference peer)
#    and reports the ratios (targets: scans <= 1.0, gc plan <= 1.2, per
#    reference <= 1.5 x the JSON files). PostgreSQL is the server of
#    MEDIACTL_BENCH_POSTGRES_URL (a database mediactl_bench is created
#    there), else that of MEDIACTL_TEST_POSTGRES_URL; without either the
#    PostgreSQL rows are left out.
#
# PARTS picks the parts (default "files db"; "files" is 1-3). BIN=path times that
# binary instead of a build of the work tree.
# Needs: go, rg, hyperfine, /usr/bin/time (apt-get install -y ripgrep hyperfine time),
# and for the databases sqlite3 and psql.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
SIZE=${SIZE:-1GiB}
DENSE_SIZE=${DENSE_SIZE:-640MB}
RUNS=${RUNS:-5}
OLD=${OLD:-}
PARTS=${PARTS:-"files db"}
part() { [[ " $PARTS " == *" $1 "* ]]; }
for tool in rg hyperfine /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "bench/scan.sh: $tool missing: apt-get install -y ripgrep hyperfine time" >&2; exit 2; }
done
mkdir -p "$BENCH_DIR" bench/out
bin="$BENCH_DIR/mediactl"
if [ -n "${BIN:-}" ]; then
  bin=$BIN # a build of a commit, rather than of the work tree
else
  go build -o "$bin" ./cmd/mediactl
fi

gen() { # gen DIR ARGS...: generate a tree once
  local dir=$1; shift
  if [ ! -f "$dir/.done" ]; then
    rm -rf "$dir"
    go run ./bench/gensessions -dir "$dir" "$@"
    touch "$dir/.done"
  fi
}

if part files; then
gen "$BENCH_DIR/scan-$SIZE" -size "$SIZE" -distinct 400000 -blobs 0
gen "$BENCH_DIR/scan-dense-$DENSE_SIZE" -size "$DENSE_SIZE" -distinct 200000 -blobs 200000 -prose 60

# time TREE NAME [STORE]: hyperfine medians of mediactl (and $OLD) and rg over TREE's sessions.
time_tree() {
  local tree=$1 name=$2 store=${3:-}
  local sessions="$tree/.forge/sessions" out="bench/out/scan-$name.json"
  cat "$sessions"/* >/dev/null # page cache
  local cmds=(-n mediactl "$bin scan -q --no-progress --sessions $sessions")
  [ -n "$OLD" ] && cmds+=(-n old "$OLD scan -q --no-progress --sessions $sessions")
  if [ -n "$store" ]; then
    cmds+=(-n mediactl-store "$bin scan -q --no-progress --layout forge --root $tree")
    [ -n "$OLD" ] && cmds+=(-n old-store "$OLD scan -q --no-progress --layout forge --root $tree")
  fi
  cmds+=(-n rg "rg -o [0-9a-f]{64} $sessions")
  # -i: a dense tree whose blobs are missing would exit 1; the figures stand.
  hyperfine -N -i -w 1 -r "$RUNS" --export-json "$out" "${cmds[@]}" >/dev/null
  echo "$out"
}
sparse_json=$(time_tree "$BENCH_DIR/scan-$SIZE" sparse)
dense_json=$(time_tree "$BENCH_DIR/scan-dense-$DENSE_SIZE" dense store)

# rss TREE: peak RSS in KiB of one scan of TREE's sessions, and what it counted.
rss() {
  local tree=$1 name=$2
  /usr/bin/time -v "$bin" scan --no-progress --sessions "$tree/.forge/sessions" -o json \
    > "$BENCH_DIR/rss-$name.json" 2> "$BENCH_DIR/rss-$name.time" || [ $? -le 1 ]
  awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$BENCH_DIR/rss-$name.time"
}
gen "$BENCH_DIR/scan-1m-refs" -size 700MiB -distinct 1000000 -prose 60 -blobs 0
rss_1m=$(rss "$BENCH_DIR/scan-1m-refs" 1m)
rss_dense=$(rss "$BENCH_DIR/scan-dense-$DENSE_SIZE" dense)

python3 - "$sparse_json" "$dense_json" "$BENCH_DIR" "$SIZE" "$DENSE_SIZE" "$rss_1m" "$rss_dense" "$(nproc)" <<'PY'
import json, os, subprocess, sys
sparse_json, dense_json, bench, size, dsize, rss_1m, rss_dense, cpus = sys.argv[1:]
def load(p):
    return {x["command"]: x for x in json.load(open(p))["results"]}
def refs(name):
    return json.load(open(os.path.join(bench, f"rss-{name}.json")))
def tree_bytes(tree):
    d = os.path.join(tree, ".forge", "sessions")
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
print(f"scan benchmark ({cpus} CPUs), session trees in page cache, median of runs (min-max)")
for label, p, tree, target in (("sparse", sparse_json, f"scan-{size}", 1.3), ("dense", dense_json, f"scan-dense-{dsize}", 1.0)):
    r = load(p)
    b = tree_bytes(os.path.join(bench, tree))
    rg = r["rg"]["median"]
    print(f"  {label}: {b/2**20:.0f} MiB")
    for name in ("mediactl", "old", "mediactl-store", "old-store", "rg"):
        if name not in r:
            continue
        x = r[name]
        line = f"    {name:15s} {x['median']:7.3f} s  ({x['min']:.3f}-{x['max']:.3f})  {b/x['median']/1e6:6.0f} MB/s  user+sys {x['user']+x['system']:.2f} s"
        if name != "rg":
            line += f"   ratio/rg {x['median']/rg:.2f}"
        print(line)
    print(f"    ratio mediactl/rg {r['mediactl']['median']/rg:.2f} (target <= {target})")
d = refs("dense")
print(f"  dense tree: {d['references']} references, {d['distinct_blobs']} distinct; peak RSS {int(rss_dense)/1024:.0f} MiB")
m = refs("1m")
print(f"  peak RSS, {m['distinct_blobs']} distinct references: {int(rss_1m)/1024:.0f} MiB (target <= 200 MiB)")
PY
fi

part db || exit 0

# The 1M tree of bench/scale.sh, its SQLite database, and the same rows in PostgreSQL.
for tool in sqlite3 psql; do
  command -v "$tool" >/dev/null || { echo "bench/scan.sh: $tool missing: apt-get install -y sqlite3 postgresql-client" >&2; exit 2; }
done
work="$BENCH_DIR/scale-1M"
gen "$work" -size 640MB -distinct 200000 -blobs 200000 -prose 60 -blob-age 1000h
db="$work/coffer.db"
if [ ! -f "$db.done" ]; then
  go run ./bench/tosqlite -sessions "$work/.forge/sessions" -db "$db"
  touch "$db.done"
fi
pg=${MEDIACTL_BENCH_POSTGRES_URL:-}
if [ -z "$pg" ] && [ -n "${MEDIACTL_TEST_POSTGRES_URL:-}" ]; then
  pg=$(python3 -c 'import sys, urllib.parse as u; p=u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/mediactl_bench")))' "$MEDIACTL_TEST_POSTGRES_URL")
fi
if [ -n "$pg" ]; then
  admin=$(python3 -c 'import sys, urllib.parse as u; p=u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/postgres")))' "$pg")
  rows=$(psql "$pg" -Atqc 'SELECT count(*) FROM messages' 2>/dev/null || echo 0)
  want=$(sqlite3 "$db" 'SELECT count(*) FROM chat_messages')
  if [ "$rows" != "$want" ]; then
    echo "loading $want messages into $(python3 -c 'import sys; print(sys.argv[1].split("@")[-1])' "$pg") ..."
    psql "$admin" -qc 'DROP DATABASE IF EXISTS mediactl_bench' -c 'CREATE DATABASE mediactl_bench'
    psql "$pg" -qc 'CREATE TABLE messages(id bigserial PRIMARY KEY, thread_id uuid NOT NULL, role text, content text, metadata jsonb, created_at timestamptz DEFAULT now())'
    # content: the text block; metadata: {"attachments": [the attachment blocks]}.
    sqlite3 -csv "$db" "SELECT lower(substr(h,1,8)||'-'||substr(h,9,4)||'-'||substr(h,13,4)||'-'||substr(h,17,4)||'-'||substr(h,21,12)),
        role, json_extract(content, '\$[0].text'), json_object('attachments', json(json_remove(content, '\$[0]'))), created_at
      FROM (SELECT substr(hex(conversation_id)||'00000000000000000000000000000000', 1, 32) h, * FROM chat_messages ORDER BY rowid)" |
      psql "$pg" -qc "COPY messages(thread_id, role, content, metadata, created_at) FROM STDIN WITH (FORMAT csv)"
    psql "$pg" -qc 'VACUUM ANALYZE messages'
  fi
fi

cat "$db" "$work"/.forge/sessions/* >/dev/null # page cache
inbound="$work/.forge/files/inbound"
out=bench/out/scan-db.json
cmds=(-n scan-sqlite "$bin scan -q --no-progress --sessions sqlite:$db -o json"
  -n gcplan-sqlite "$bin gc -q --no-progress --sessions sqlite:$db --store $inbound --max-delete 100% -o json"
  -n dump-rg "bash -c 'sqlite3 $db .dump | rg -o [0-9a-f]{64} | wc -l'"
  -n scan-files "$bin scan -q --no-progress --sessions $work/.forge/sessions -o json")
[ -n "$OLD" ] && cmds+=(-n old-scan-sqlite "$OLD scan -q --no-progress --sessions sqlite:$db -o json"
  -n old-gcplan-sqlite "$OLD gc -q --no-progress --sessions sqlite:$db --store $inbound --max-delete 100% -o json")
if [ -n "$pg" ]; then
  cmds+=(-n scan-postgres "$bin scan -q --no-progress --sessions $pg -o json"
    -n copy-rg "bash -c 'psql \"$pg\" -c \"COPY messages TO STDOUT\" | rg -o [0-9a-f]{64} | wc -l'")
  [ -n "$OLD" ] && cmds+=(-n old-scan-postgres "$OLD scan -q --no-progress --sessions $pg -o json")
fi
# -i: gc exits 1 when it plans deletions; the figures stand.
hyperfine -N -i -w 1 -r "$RUNS" --export-json "$out" "${cmds[@]}" >/dev/null
"$bin" scan -q --no-progress --sessions "sqlite:$db" -o json > "$BENCH_DIR/db-refs-sqlite.json" || true
"$bin" scan -q --no-progress --sessions "$work/.forge/sessions" -o json > "$BENCH_DIR/db-refs-files.json" || true
[ -n "$pg" ] && { "$bin" scan -q --no-progress --sessions "$pg" -o json > "$BENCH_DIR/db-refs-postgres.json" || true; }

python3 - "$out" "$BENCH_DIR" "$(nproc)" <<'PY'
import json, os, sys
out, bench, cpus = sys.argv[1:]
r = {x["command"]: x for x in json.load(open(out))["results"]}
def refs(name):
    p = os.path.join(bench, f"db-refs-{name}.json")
    return json.load(open(p))["references"] if os.path.exists(p) else 0
n = {"sqlite": refs("sqlite"), "files": refs("files"), "postgres": refs("postgres")}
print(f"databases ({cpus} CPUs), bench/scale.sh's 1M messages, in page cache, median of runs (min-max), user+sys")
for name, x in r.items():
    print(f"  {name:18s} {x['median']:7.3f} s  ({x['min']:.3f}-{x['max']:.3f})  user+sys {x['user']+x['system']:6.2f} s")
def ratio(a, b, target):
    if a in r and b in r:
        print(f"  {a}/{b}: {r[a]['median']/r[b]['median']:.2f} (target <= {target})")
ratio("scan-sqlite", "dump-rg", 1.0)
ratio("gcplan-sqlite", "dump-rg", 1.2)
ratio("scan-postgres", "copy-rg", 1.0)
ratio("old-scan-sqlite", "dump-rg", "-")
ratio("old-gcplan-sqlite", "dump-rg", "-")
ratio("old-scan-postgres", "copy-rg", "-")
per = lambda c, k: r[c]["median"] / n[k] * 1e6
if n["files"]:
    f = per("scan-files", "files")
    print(f"  per reference: files {f:.2f} us ({n['files']} references)")
    for c, k in (("scan-sqlite", "sqlite"), ("scan-postgres", "postgres")):
        if c in r and n[k]:
            print(f"    {c} {per(c, k):.2f} us ({n[k]} references) = {per(c, k)/f:.2f} x files (target <= 1.5)")
PY
