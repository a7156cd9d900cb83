#!/usr/bin/env bash
# azurite.sh — run a local Azurite (Azure Blob Storage emulator) for mediactl's tests.
#
# Usage:
#   eval "$(scripts/services/azurite.sh start)"   # installs if needed, starts, exports MEDIACTL_TEST_AZURITE
#   scripts/services/azurite.sh status            # prints the export line if running, exits 1 otherwise
#   scripts/services/azurite.sh stop              # stops it
#
# Azurite is installed from npm (azurite@$AZURITE_VERSION) into a cache folder, never
# globally: $MEDIACTL_CACHE_DIR if set, else the repository's .cache/ folder. The
# server listens on 127.0.0.1 only, keeps its data in memory, and logs to
# <cache>/azurite/run/azurite.log. Only the export line is written to stdout.
#
# Environment:
#   AZURITE_PORT           first port to try (default 10000; the next free one is used if busy)
#   AZURITE_START_TIMEOUT  seconds to wait for the server to accept connections (default 60)
#   MEDIACTL_CACHE_DIR     cache root (default: <repo>/.cache)
set -euo pipefail

AZURITE_VERSION=3.37.0
HOST=127.0.0.1

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cache_root=${MEDIACTL_CACHE_DIR:-$repo_root/.cache}
install_dir=$cache_root/azurite/$AZURITE_VERSION
run_dir=$cache_root/azurite/run
pid_file=$run_dir/azurite.pid
port_file=$run_dir/azurite.port
log_file=$run_dir/azurite.log
bin=$install_dir/node_modules/.bin/azurite-blob

SERVICE=azurite.sh
PROCESS_PATTERN='*azurite*'
# shellcheck source=lib.sh
source "$script_dir/lib.sh"

install() {
	if [[ -x $bin ]] && grep -q "\"version\": \"$AZURITE_VERSION\"" "$install_dir/node_modules/azurite/package.json" 2>/dev/null; then
		return 0
	fi
	if ! command -v npm >/dev/null; then
		# As postgres.sh does for PostgreSQL: from the distribution, as root.
		[[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null ||
			die "npm not found: install Node.js (>= 18) and npm (e.g. sudo apt-get install -y nodejs npm), or run this script as root"
		echo "azurite.sh: installing nodejs and npm with apt-get (log: $log_file)" >&2
		mkdir -p "$run_dir"
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm ||
			{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm; }; } >>"$log_file" 2>&1 ||
			die "apt-get install nodejs npm failed; see $log_file"
	fi
	mkdir -p "$cache_root" "$run_dir"
	# Keep the cache out of git without touching the repository's .gitignore.
	[[ -e $cache_root/.gitignore ]] || printf '*\n' >"$cache_root/.gitignore"
	echo "azurite.sh: installing azurite@$AZURITE_VERSION into $install_dir (log: $log_file)" >&2
	local tmp=$install_dir.tmp.$$
	rm -rf "$tmp"
	mkdir -p "$tmp"
	if ! npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION" >>"$log_file" 2>&1; then
		rm -rf "$tmp"
		die "npm install azurite@$AZURITE_VERSION failed; see $log_file"
	fi
	rm -rf "$install_dir"
	mv "$tmp" "$install_dir"
	[[ -x $bin ]] || die "azurite-blob not found at $bin after install; see $log_file"
}

print_export() {
	echo "export MEDIACTL_TEST_AZURITE=$HOST:$(<"$port_file")"
}

start() {
	mkdir -p "$run_dir"
	if serving; then
		print_export
		return 0
	fi
	rm -f "$pid_file" "$port_file"
	install

	local port
	port=$(pick_port AZURITE_PORT 10000)

	echo "azurite.sh: starting azurite-blob on $HOST:$port at $(date -u +%FT%TZ)" >>"$log_file"
	# Started from the run folder, so that nothing Azurite may write lands in the caller's cwd.
	cd "$run_dir"
	nohup "$bin" \
		--blobHost "$HOST" --blobPort "$port" \
		--inMemoryPersistence --skipApiVersionCheck --loose --disableTelemetry \
		</dev/null >>"$log_file" 2>&1 &
	local pid=$!
	echo "$pid" >"$pid_file"
	echo "$port" >"$port_file"

	local timeout=${AZURITE_START_TIMEOUT:-60} waited=0
	until port_open "$port"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			rm -f "$pid_file" "$port_file"
			tail -n 20 "$log_file" >&2 || true
			die "azurite exited during startup; see $log_file"
		fi
		if ((waited >= timeout * 10)); then
			stop_pid "$pid" 10
			rm -f "$pid_file" "$port_file"
			die "azurite did not accept connections on $HOST:$port within ${timeout}s; see $log_file"
		fi
		sleep 0.1
		waited=$((waited + 1))
	done
	echo "azurite.sh: azurite (pid $pid) listening on $HOST:$port" >&2
	print_export
}

stop() {
	if ! running; then
		rm -f "$pid_file" "$port_file"
		echo "azurite.sh: not running" >&2
		return 0
	fi
	local pid
	pid=$(<"$pid_file")
	stop_pid "$pid" 10
	rm -f "$pid_file" "$port_file"
	echo "azurite.sh: stopped (pid $pid)" >&2
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	echo '  eval "$('"$0"' start)" starts Azurite and exports MEDIACTL_TEST_AZURITE' >&2
	exit 2
	;;
esac
