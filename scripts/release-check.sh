#!/usr/bin/env bash
# Release check, run by CI after the tests: goreleaser itself checks
# goreleaser.yaml and builds the linux/amd64 snapshot, and the result is
# checked.
#
#  1. goreleaser.yaml decodes strictly and says what a release must ship
#     (internal/releaseconf's tests);
#  2. goreleaser v2.15.1 is installed with 'go install' into
#     ${MEDIACTL_CACHE_DIR:-.cache}/bin (the module proxy is the only
#     network), or reused from there when it reports that version;
#  3. 'goreleaser check', then 'goreleaser build --snapshot --single-target
#     --clean' for linux/amd64, which runs the before hooks (completions, man
#     page) against this tree;
#  4. the binary is statically linked and its 'version -o json' carries the
#     snapshot version, HEAD's commit and its date; the hooks wrote non-empty
#     files;
#  5. the container image kos describes, assembled offline around that
#     binary (internal/releaseconf/imagecheck): its config decodes with a
#     non-root user and ko's entrypoint, and the binary runs from its layer.
#
# Where goreleaser cannot be installed (no module proxy) or run (not a git
# checkout), and only when CI is not true, step 3 falls back to building
# linux/amd64 from goreleaser.yaml's build section with the same env, flags
# and ldflags (internal/releaseconf/releasecheck), and says so. Under CI=true
# that is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

goreleaser_module=github.com/goreleaser/goreleaser/v2
goreleaser_version=v2.15.1
cache=${MEDIACTL_CACHE_DIR:-$PWD/.cache}
goreleaser=$cache/bin/goreleaser
dist=.release/dist # goreleaser.yaml's dist

start=$(date +%s)
echo "release-check: goreleaser.yaml, strict decode and release contents"
go test -count=1 ./internal/releaseconf

# fallback_or_fail says why goreleaser is not used; under CI that fails.
fallback_or_fail() {
	if [[ ${CI:-} == true ]]; then
		echo "release-check: $1 (CI=true: no fallback)" >&2
		exit 1
	fi
	echo "release-check: NOTE: $1; building from goreleaser.yaml's build section instead (not goreleaser itself)"
	use_goreleaser=false
}

use_goreleaser=true
have=$([[ -x $goreleaser ]] && "$goreleaser" --version 2>/dev/null || true)
if [[ $have =~ GitVersion:\ +$goreleaser_version($'\n'|$) ]]; then
	echo "release-check: goreleaser $goreleaser_version from $goreleaser"
else
	echo "release-check: installing goreleaser $goreleaser_version into $cache/bin"
	t=$(date +%s)
	# Module mode, whatever the tree's settings: GOFLAGS=-mod=vendor or a
	# go.work would otherwise apply to goreleaser's own build.
	if GOBIN=$cache/bin GOWORK=off GOFLAGS= go install "$goreleaser_module@$goreleaser_version"; then
		echo "release-check: goreleaser installed in $(($(date +%s) - t))s"
	else
		fallback_or_fail "goreleaser $goreleaser_version could not be installed"
	fi
fi

# goreleaser's snapshot version: the last tag's patch + 1, then "-next"
# (snapshot.version_template), without the tag's leading v.
if commit=$(git rev-parse HEAD 2>/dev/null); then
	date=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)
	tag=$(git describe --tags --abbrev=0 2>/dev/null || echo v0.0.0)
else
	# Not a git checkout (a source archive): goreleaser refuses it.
	commit=none date=$(date -u +%Y-%m-%dT%H:%M:%SZ) tag=v0.0.0
	if $use_goreleaser; then
		fallback_or_fail "not a git checkout, which goreleaser needs"
	fi
fi
IFS=. read -r major minor patch <<<"${tag#v}"
version="$major.$minor.$((${patch%%[!0-9]*} + 1))-next"

rm -rf .release/gen
if $use_goreleaser; then
	"$goreleaser" check
	# Without a git remote (a clone made without one, a worktree of such a
	# clone) goreleaser leaves the commit and date out; the remote it would
	# read is the one goreleaser.yaml publishes to, given to git for this
	# command only.
	if [[ -z $(git remote) ]]; then
		export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url
		GIT_CONFIG_VALUE_0=$(go run ./internal/releaseconf/releasecheck -config goreleaser.yaml -print-repo)
		export GIT_CONFIG_VALUE_0
	fi
	t=$(date +%s)
	GOOS=linux GOARCH=amd64 "$goreleaser" build --snapshot --single-target --clean
	echo "release-check: goreleaser snapshot build in $(($(date +%s) - t))s"
	unset GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0
	bins=("$dist"/mediactl_linux_amd64*/mediactl)
	[[ -x ${bins[0]} ]] || { echo "release-check: goreleaser built no linux/amd64 binary under $dist" >&2; exit 1; }
	bin=${bins[0]}
	go run ./internal/releaseconf/releasecheck -binary "$bin" -goos linux -goarch amd64 \
		-version "$version" -commit "$commit" -date "$date"
else
	out=.release/snapshot
	rm -rf "$out"
	go run ./internal/releaseconf/releasecheck -config goreleaser.yaml -goos linux -goarch amd64 \
		-version "$version" -commit "$commit" -date "$date" -out "$out"
	bin=$out/linux_amd64/mediactl
	while IFS= read -r hook; do
		echo "release-check: hook: $hook"
		bash -c "$hook"
	done < <(go run ./internal/releaseconf/releasecheck -config goreleaser.yaml -print-hooks)
fi
if command -v file >/dev/null; then file "$bin"; fi

# The container image of goreleaser.yaml's kos section, assembled offline
# around this binary (its base image is pulled from a registry at release
# time, which this check cannot reach): config decoded, binary run from it.
go run ./internal/releaseconf/imagecheck -config goreleaser.yaml -binary "$bin" -out .release/image \
	-version "$version" -commit "$commit"

for f in .release/gen/completions/mediactl.bash .release/gen/completions/_mediactl \
	.release/gen/completions/mediactl.fish .release/gen/completions/mediactl.ps1 \
	.release/gen/man/mediactl.1 .release/gen/man/mediactl.1.gz; do
	[[ -s $f ]] || { echo "release-check: a before hook did not write $f" >&2; exit 1; }
done
echo "release-check: completions and man page generated"
echo "release-check: ok in $(($(date +%s) - start))s"
