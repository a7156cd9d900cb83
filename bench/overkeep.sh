#!/usr/bin/env bash
# bench/overkeep.sh — the retention rule's over-keep budget, before and after a change of
# the rule, in one run: how many true orphans (blobs no session needs) `mediactl gc` keeps,
# and their bytes, because the rule sees their name somewhere in a session; and the needed
# blobs it would delete, which must be none.
#
# Builds mediactl twice: BASE_REF (default fb6bbe3, the commit before the rule change) and
# NEW_REF (default HEAD), each in a temporary `git worktree`, so that uncommitted edits in
# the checkout do not enter either build; NEW_REF=worktree builds the checkout as it is
# instead. Each build plans `gc --min-age 0 --dry-run -o json` (flags that BASE_REF has
# too) on fresh copies of four stores, whose truth says which blobs some session needs:
#   forge  — the store forge's own code wrote (internal/realworld/testdata: 104 blobs in
#            .forge/files/{inbound,generated}, 50 JSON sessions), `--layout forge --root`;
#   coffer — the pre-upgrade coffer home coffer's own code wrote (98 files in
#            channel-media, sessions in coffer.db), `--layout coffer --root HOME/.coffer`;
#   gen    — a bench/gensessions tree of N blobs (default 20000), half of them referenced,
#            the gc.sh shape; the generator's construction says which: blobs 0..K-1 are
#            referenced, the others named nowhere;
#   uploads — a `bench/overkeep genuploads` store of UPLOADS files (default 2000) with the
#            names people's devices and hands give (IMG_4821.JPG, "Screenshot 2024-06-12 at
#            09.30.12.png", "Scan 12 of invoice-2024-03.pdf", "Lebenslauf März.pdf",
#            image.png in many users' folders) under agent-inputs/{user}/{thread}/uploads/,
#            and a folder of one JSON session per thread, `--store DIR --sessions DIR`:
#            about half the uploads attached by their key, and every message with prose
#            whose words the names share, naming no file. The construction says which are
#            attached.
# A true orphan is every blob the truth does not call needed: forge's `orphans` and its
# text-only blob; coffer's `orphans` and its `mentioned_only` files (not attached; named
# only in a tool's `ls` output); gen's unreferenced blobs; the uploads never attached (named,
# when an attached upload in another folder has the same file name). bench/overkeep (built
# first) unpacks the realworld stores as internal/realworld does, writes the uploads store
# and writes the comparison: a markdown table with one column per revision, then the kept
# orphans of each, on stdout and in $BENCH_DIR/overkeep.md. It exits 1, saying so on stderr, when a plan would delete a
# needed blob.
#
#   bench/overkeep.sh                                  # fb6bbe3 against HEAD
#   BASE_REF=v1.4.0 NEW_REF=worktree N=100000 UPLOADS=20000 bench/overkeep.sh
#   KEEP=1 bench/overkeep.sh                           # keep the stores, plans and truths
#
# Needs go and git; nothing else (no jq, no python).
set -euo pipefail
cd "$(dirname "$0")/.."

BASE_REF=${BASE_REF:-fb6bbe3}
NEW_REF=${NEW_REF:-HEAD}
N=${N:-20000}
UPLOADS=${UPLOADS:-2000}
KEEP=${KEEP:-0}
BENCH_DIR=${BENCH_DIR:-/tmp/mediactl-bench}
die() { echo "bench/overkeep.sh: $*" >&2; exit 2; }

mkdir -p "$BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
work=$(mktemp -d "$BENCH_DIR/overkeep.XXXXXX")
trees=()
label=
cleanup() {
  local t
  for t in "${trees[@]}"; do git worktree remove --force "$t" >/dev/null 2>&1 || true; done
  git worktree prune >/dev/null 2>&1 || true
  if [ "$KEEP" = 1 ]; then echo "bench/overkeep.sh: stores, plans and truths kept in $work" >&2; return; fi
  chmod -R u+rwX "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# build REF NAME: mediactl at REF into $work/bin/NAME; sets label, the column's name.
build() {
  local ref=$1 name=$2 commit dirty=""
  if [ "$ref" = worktree ]; then
    commit=$(git rev-parse --short HEAD)
    [ -z "$(git status --porcelain -- cmd pkg internal go.mod go.sum)" ] || dirty=" + uncommitted changes"
    go build -o "$work/bin/$name" ./cmd/mediactl || die "the checkout does not build"
    label="worktree ($commit$dirty)"
    return
  fi
  commit=$(git rev-parse --verify --short "$ref^{commit}") || die "no commit $ref"
  git worktree add --detach "$work/src-$name" "$commit" >/dev/null 2>&1 || die "git worktree add $ref failed"
  trees+=("$work/src-$name")
  (cd "$work/src-$name" && go build -o "$work/bin/$name" ./cmd/mediactl) || die "$ref does not build"
  if [ "$ref" = "$commit" ]; then label=$commit; else label="$ref ($commit)"; fi
}

go build -o "$work/bin/overkeep" ./bench/overkeep
build "$BASE_REF" base; base_label=$label
build "$NEW_REF" new; new_label=$label
echo "bench/overkeep.sh: base $base_label, new $new_label" >&2

# The generated tree, once; each revision gets its own copy.
gen="$work/gen-src"
say=$(go run ./bench/gensessions -dir "$gen" -size $(( N * 640 )) -distinct $(( N / 2 )) -blobs "$N" -prose 60)
referenced=$(sed -n 's/.*referencing \([0-9][0-9]*\) distinct blobs.*/\1/p' <<<"$say")
[ -n "$referenced" ] || die "gensessions said: $say"
# The uploads store, its sessions and its truth, once too.
mkdir "$work/uploads-src"
"$work/bin/overkeep" genuploads -n "$UPLOADS" -store "$work/uploads-src/media" \
  -sessions "$work/uploads-src/sessions" -out "$work/uploads-src/truth.json"

for rev in base new; do
  d="$work/$rev"
  "$work/bin/overkeep" prepare -dir "$d" >/dev/null
  cp -a "$gen" "$d/gen"
  mkdir "$d/uploads"
  cp -a "$work/uploads-src/media" "$work/uploads-src/sessions" "$d/uploads/"
  cp "$work/uploads-src/truth.json" "$d/uploads.truth.json"
  "$work/bin/overkeep" gentruth -root "$d/gen" -blobs "$N" -referenced "$referenced" -out "$d/gen.truth.json"
  for s in forge coffer gen uploads; do
    case $s in
      forge) args=(--layout forge --root "$d/forge/work") ;;
      coffer) args=(--layout coffer --root "$d/coffer/home-legacy/.coffer") ;;
      gen) args=(--layout forge --root "$d/gen") ;;
      uploads) args=(--store "$d/uploads/media" --sessions "$d/uploads/sessions") ;;
    esac
    code=0
    "$work/bin/$rev" gc "${args[@]}" --min-age 0 --max-delete 100% --dry-run -o json --no-progress \
      >"$d/$s.gc.json" 2>"$d/$s.gc.err" || code=$?
    if [ "$code" -ne 0 ]; then
      echo "bench/overkeep.sh: $rev ($s): gc exited $code: $(head -c 400 "$d/$s.gc.err")" >&2
    fi
  done
done

code=0
{
  echo "Over-keep of the retention rule: \`mediactl gc --min-age 0 --dry-run\`, $(date -u +%Y-%m-%d), gen N=$N, uploads N=$UPLOADS"
  echo
  "$work/bin/overkeep" report -stores "forge coffer gen uploads" -rev "$base_label=$work/base" -rev "$new_label=$work/new"
} > "$work/overkeep.md" || code=$?
cp "$work/overkeep.md" "$BENCH_DIR/overkeep.md"
cat "$work/overkeep.md"
exit "$code"
