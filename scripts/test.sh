#!/usr/bin/env bash
# Runs the whole mediactl test suite on a fresh machine: checks every
# prerequisite first (and lists all that are missing at once), starts the
# servers the tests talk to (PostgreSQL, Azurite and SeaweedFS on 127.0.0.1,
# installing or building them first when missing), then gofmt, go vet and the
# race-enabled tests. The in-process fakes (gofakes3, fake-gcs-server) need
# nothing installed. Without a cache, building SeaweedFS's weed takes about 5
# minutes (WEED_BIN=/path/to/weed skips it). Servers that were already running
# are used and left running; the ones this run started are stopped at the end.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh ./pkg/scan/...  # only these packages (servers are still started)
#   scripts/test.sh --quick [PKG]   # the edit-test loop: no servers, no -race; the
#                                   # tests that need a server say they were skipped
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
if [ "${1:-}" = --quick ]; then
  quick=true
  shift
fi
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)

if $quick; then
  command -v go >/dev/null || { echo "scripts/test.sh: go not found (https://go.dev/dl/)" >&2; exit 2; }
  echo "== quick: gofmt, go vet, go test without -race and without servers"
  unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
  if [ -n "$unformatted" ]; then
    echo "gofmt would change:"; echo "$unformatted"; exit 1
  fi
  go vet "${pkgs[@]}"
  # Without the servers' variables the server tests skip (CI=true would
  # make them fail, so it is dropped here).
  env -u CI -u MEDIACTL_TEST_POSTGRES_URL -u MEDIACTL_TEST_AZURITE -u MEDIACTL_TEST_SEAWEEDFS \
    go test -count=1 -timeout 15m "${pkgs[@]}"
  echo "== quick: done; the PostgreSQL, Azurite, SeaweedFS and browser tests were skipped: scripts/test.sh runs them"
  exit 0
fi

# preflight: every missing prerequisite, in one list.
missing=()
root=false
[ "$(id -u)" -eq 0 ] && root=true
can_apt=false
if command -v apt-get >/dev/null && { $root || sudo -n true 2>/dev/null; }; then can_apt=true; fi
command -v go >/dev/null || missing+=("go (https://go.dev/dl/)")
command -v git >/dev/null || missing+=("git")
command -v gcc >/dev/null || missing+=("gcc, for go test -race (apt-get install -y gcc)")
if ! command -v npm >/dev/null && ! $can_apt; then
  missing+=("node and npm, for Azurite (apt-get install -y nodejs npm, or run as root to have them installed)")
fi
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null && ! $can_apt; then
  missing+=("PostgreSQL server binaries (apt-get install -y postgresql, or run as root to have them installed)")
fi
# systemd-analyze verifies the deploy recipes' units (cmd/mediactl's
# TestDeploySystemdAnalyze); installed when it can be.
if ! command -v systemd-analyze >/dev/null; then
  if $can_apt; then
    echo "scripts/test.sh: installing systemd for systemd-analyze" >&2
    sudo_=""; $root || sudo_="sudo -n"
    $sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q systemd >/dev/null ||
      missing+=("systemd-analyze (apt-get install -y systemd)")
  elif [ "${CI:-}" = true ]; then
    missing+=("systemd-analyze (apt-get install -y systemd), which CI=true runs")
  fi
fi
# Chromium renders report --html's page (cmd/mediactl's
# TestReportHTMLInBrowser, which skips without it unless CI=true); installed
# when it can be.
if [ ! -x /usr/bin/chromium ]; then
  if $can_apt; then
    echo "scripts/test.sh: installing chromium for the report page's browser test" >&2
    sudo_=""; $root || sudo_="sudo -n"
    $sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null ||
      missing+=("chromium (apt-get install -y chromium)")
  elif [ "${CI:-}" = true ]; then
    missing+=("chromium (apt-get install -y chromium), which CI=true runs")
  fi
fi
if [ -z "${WEED_BIN:-}" ] && ! scripts/services/seaweedfs.sh status >/dev/null 2>&1; then
  weed=$(ls "${MEDIACTL_CACHE_DIR:-.cache}"/seaweedfs/*/weed "${XDG_CACHE_HOME:-$HOME/.cache}"/mediactl/seaweedfs/*/weed 2>/dev/null | head -n 1 || true)
  if [ -z "$weed" ]; then
    echo "scripts/test.sh: SeaweedFS's weed is built once, now (5 to 9 minutes, 3 GiB of memory); later runs, and other clones, reuse it from ${XDG_CACHE_HOME:-$HOME/.cache}/mediactl" >&2
  fi
  avail_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
  if [ -z "$weed" ] && [ "${avail_kib:-0}" -lt $((3 * 1024 * 1024)) ]; then
    missing+=("3 GiB of free memory to build SeaweedFS's weed ($((avail_kib / 1024)) MiB available), or WEED_BIN=/path/to/weed")
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "scripts/test.sh: missing prerequisites:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 2
fi

# Start what is not running; remember what to stop.
started=()
cleanup() {
  for s in "${started[@]}"; do
    scripts/services/"$s".sh stop >/dev/null 2>&1 || true
  done
}
trap cleanup EXIT

echo "== starting test services"
for s in postgres azurite seaweedfs; do
  if exports=$(scripts/services/$s.sh status 2>/dev/null); then
    echo "$s: already running, left running"
  else
    exports=$(scripts/services/$s.sh start)
    started+=("$s")
  fi
  eval "$exports"
done
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
