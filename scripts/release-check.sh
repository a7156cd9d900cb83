#!/usr/bin/env bash
# Release check, run by CI after the tests: what 'goreleaser check' and
# 'goreleaser build --snapshot --single-target --clean' would prove for
# linux/amd64, without installing goreleaser (building it costs minutes a CI
# run does not have).
#
#  1. goreleaser.yaml decodes strictly (an unknown or v1 key fails) and says
#     what a release must ship (internal/releaseconf's tests);
#  2. linux/amd64 is built from goreleaser.yaml's own build section (same
#     env, flags and ldflags; snapshot version, HEAD's commit and date);
#  3. the binary is statically linked and its 'version -o json' carries the
#     version, commit and date it was given;
#  4. the before hooks (completions, man page) run against this tree and
#     write non-empty files, when this build has those commands.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
echo "release-check: goreleaser.yaml, strict decode and release contents"
go test -count=1 ./internal/releaseconf

# goreleaser's snapshot version: the last tag's patch + 1, then "-next"
# (snapshot.version_template), without the tag's leading v.
if commit=$(git rev-parse HEAD 2>/dev/null); then
	date=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)
	tag=$(git describe --tags --abbrev=0 2>/dev/null || echo v0.0.0)
else
	# Not a git checkout (a source archive): goreleaser would refuse; say
	# what is built rather than stop.
	commit=none date=$(date -u +%Y-%m-%dT%H:%M:%SZ) tag=v0.0.0
fi
IFS=. read -r major minor patch <<<"${tag#v}"
version="$major.$minor.$((${patch%%[!0-9]*} + 1))-next"

out=.release/snapshot
rm -rf "$out"
go run ./internal/releaseconf/releasecheck -config goreleaser.yaml -goos linux -goarch amd64 \
	-version "$version" -commit "$commit" -date "$date" -out "$out"
bin=$out/linux_amd64/mediactl
if command -v file >/dev/null; then file "$bin"; fi

# The before hooks need 'mediactl completion' and 'mediactl man'.
if "$bin" completion bash >/dev/null 2>&1 && "$bin" man >/dev/null 2>&1; then
	rm -rf .release/gen
	while IFS= read -r hook; do
		echo "release-check: hook: $hook"
		bash -c "$hook"
	done < <(go run ./internal/releaseconf/releasecheck -config goreleaser.yaml -print-hooks)
	for f in .release/gen/completions/mediactl.bash .release/gen/completions/_mediactl \
		.release/gen/completions/mediactl.fish .release/gen/man/mediactl.1; do
		[[ -s $f ]] || { echo "release-check: a before hook did not write $f" >&2; exit 1; }
	done
	echo "release-check: completions and man page generated"
else
	echo "release-check: NOTE: this build has no 'completion'/'man' commands; the before hooks were not run"
fi
echo "release-check: ok in $(($(date +%s) - start))s"
