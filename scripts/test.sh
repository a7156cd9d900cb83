#!/usr/bin/env bash
# Runs the whole mediactl test suite on a fresh machine: starts the servers the
# tests talk to (PostgreSQL, Azurite and SeaweedFS on 127.0.0.1, installing or
# building them first when missing), then gofmt, go vet and the race-enabled
# tests. The in-process fakes (gofakes3, fake-gcs-server) need nothing installed.
# Without a cache, building SeaweedFS's weed takes about 5 minutes.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh ./pkg/scan/...  # only these packages (servers are still started)
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)

cleanup() {
  scripts/services/azurite.sh stop >/dev/null 2>&1 || true
  scripts/services/seaweedfs.sh stop >/dev/null 2>&1 || true
  scripts/services/postgres.sh stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "== starting test services"
eval "$(scripts/services/postgres.sh start)"
eval "$(scripts/services/azurite.sh start)"
eval "$(scripts/services/seaweedfs.sh start)"
echo "postgres:  ${MEDIACTL_TEST_POSTGRES_URL:?postgres did not start}"
echo "azurite:   ${MEDIACTL_TEST_AZURITE:?azurite did not start}"
echo "seaweedfs: ${MEDIACTL_TEST_SEAWEEDFS:?seaweedfs did not start}"

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet "${pkgs[@]}"

echo "== go test -race"
go test -race -count=1 -timeout 15m "${pkgs[@]}"
