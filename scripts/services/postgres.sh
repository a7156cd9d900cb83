#!/usr/bin/env bash
# postgres.sh — run a throw-away local PostgreSQL cluster for mediactl's tests.
#
# Usage:
#   eval "$(scripts/services/postgres.sh start)"   # installs if needed, starts, exports MEDIACTL_TEST_POSTGRES_URL
#   scripts/services/postgres.sh status            # prints the export line if running, exits 1 otherwise
#   scripts/services/postgres.sh stop              # stops the server and deletes the cluster
#
# The cluster lives in <cache>/pg ($MEDIACTL_CACHE_DIR if set, else the repository's
# .cache/ folder): data in <cache>/pg/data, server log in <cache>/pg/postgres.log, the
# unix socket in <cache>/pg/run. The server listens on 127.0.0.1 only, with trust
# authentication (it holds nothing but test data), and has a database mediactl_test
# owned by the superuser "postgres". Only the export line is written to stdout.
#
# When the postgres/initdb binaries are missing they are installed with apt-get (as
# root). When run as root, the server runs as the OS user "postgres" (PostgreSQL
# refuses to run as root); override with MEDIACTL_PG_OS_USER.
#
# Environment:
#   MEDIACTL_PG_PORT           first port to try (default 54329; the next free one is used if busy)
#   MEDIACTL_PG_START_TIMEOUT  seconds to wait for the server to accept connections (default 60)
#   MEDIACTL_PG_OS_USER        OS user to run the server as when started by root (default postgres)
#   MEDIACTL_CACHE_DIR         cache root (default: <repo>/.cache)
set -euo pipefail

HOST=127.0.0.1
DB=mediactl_test
DB_USER=postgres

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cache_root=${MEDIACTL_CACHE_DIR:-$repo_root/.cache}
pg_root=$cache_root/pg
# As root, the server runs as another user, who cannot reach a clone under
# /root (mode 0700): then, unless a cache folder is given, the cluster lives
# in /var/tmp, in a folder named after the clone.
if [[ -z ${MEDIACTL_CACHE_DIR:-} && $(id -u) -eq 0 ]] && id -u "${MEDIACTL_PG_OS_USER:-postgres}" >/dev/null 2>&1 &&
	! runuser -u "${MEDIACTL_PG_OS_USER:-postgres}" -- test -x "$repo_root" 2>/dev/null; then
	pg_root=/var/tmp/mediactl-pg-$(printf '%s' "$repo_root" | sha256sum | cut -c1-12)
fi
data_dir=$pg_root/data
sock_dir=$pg_root/run
log_file=$pg_root/postgres.log
port_file=$pg_root/port

SERVICE=postgres.sh
# shellcheck source=lib.sh
source "$script_dir/lib.sh"

# find_bindir: prints the folder holding initdb, pg_ctl, postgres and pg_isready,
# preferring the newest /usr/lib/postgresql/<version>/bin, else the PATH.
find_bindir() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [[ -x $d/initdb && -x $d/pg_ctl && -x $d/postgres && -x $d/pg_isready ]]; then
			echo "$d"
			return 0
		fi
	done
	local initdb
	if initdb=$(command -v initdb) && [[ -x $(dirname "$initdb")/pg_ctl ]]; then
		# Resolve symlinks such as /usr/local/bin/initdb -> /usr/lib/postgresql/15/bin/initdb.
		initdb=$(readlink -f "$initdb")
		d=$(dirname "$initdb")
		if [[ -x $d/pg_ctl && -x $d/postgres && -x $d/pg_isready ]]; then
			echo "$d"
			return 0
		fi
	fi
	return 1
}

install() {
	if bindir=$(find_bindir); then
		return 0
	fi
	[[ $(id -u) -eq 0 ]] || die "PostgreSQL server binaries not found; install them (e.g. sudo apt-get install -y postgresql) or run this script as root"
	command -v apt-get >/dev/null || die "PostgreSQL server binaries not found and apt-get is not available; install PostgreSQL and retry"
	mkdir -p "$pg_root"
	say "installing postgresql with apt-get (log: $log_file)"
	{
		apt-get update &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql
	} >>"$log_file" 2>&1 || die "apt-get install postgresql failed; see $log_file"
	bindir=$(find_bindir) || die "postgresql installed, but initdb/pg_ctl not found under /usr/lib/postgresql/*/bin"
}

# as_owner CMD...: runs CMD as the user that owns the cluster.
as_owner() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u "$os_user" -- "$@"
	else
		"$@"
	fi
}

setup_user() {
	if [[ $(id -u) -eq 0 ]]; then
		os_user=${MEDIACTL_PG_OS_USER:-postgres}
		id -u "$os_user" >/dev/null 2>&1 || die "OS user $os_user does not exist; set MEDIACTL_PG_OS_USER to a non-root user"
		[[ $(id -u "$os_user") -ne 0 ]] || die "MEDIACTL_PG_OS_USER must not be root: PostgreSQL refuses to run as root"
	else
		os_user=$(id -un)
	fi
}

# running: true when pg_ctl reports a server for the data folder (replaces
# lib.sh's: pg_ctl keeps the pid file, in a format of its own).
running() {
	[[ -s $data_dir/postmaster.pid ]] || return 1
	bindir=${bindir:-$(find_bindir)} || return 1
	as_owner "$bindir/pg_ctl" -D "$data_dir" status >/dev/null 2>&1
}

print_export() {
	echo "export MEDIACTL_TEST_POSTGRES_URL=postgres://$DB_USER@$HOST:$(<"$port_file")/$DB?sslmode=disable"
}

create_cluster() {
	mkdir -p "$cache_root"
	# Keep the cache out of git without touching the repository's .gitignore.
	[[ -e $cache_root/.gitignore ]] || printf '*\n' >"$cache_root/.gitignore"
	rm -rf "$data_dir"
	mkdir -p "$pg_root" "$sock_dir"
	if [[ $(id -u) -eq 0 ]]; then
		chown "$os_user" "$pg_root" "$sock_dir"
		# The server user must be able to reach the folder.
		runuser -u "$os_user" -- test -w "$pg_root" ||
			die "user $os_user cannot write to $pg_root (a parent folder is not searchable?); set MEDIACTL_CACHE_DIR to a folder it can reach"
	fi
	touch "$log_file"
	[[ $(id -u) -ne 0 ]] || chown "$os_user" "$log_file"
	say "creating cluster in $data_dir"
	as_owner "$bindir/initdb" -D "$data_dir" -U "$DB_USER" --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
		>>"$log_file" 2>&1 ||
		as_owner "$bindir/initdb" -D "$data_dir" -U "$DB_USER" --auth=trust --encoding=UTF8 --no-locale \
			>>"$log_file" 2>&1 ||
		die "initdb failed; see $log_file"
}

start() {
	setup_user
	if serving; then
		print_export
		return 0
	fi
	install
	[[ -s $data_dir/PG_VERSION ]] || create_cluster

	local port
	port=$(pick_port MEDIACTL_PG_PORT 54329)

	touch "$log_file"
	[[ $(id -u) -ne 0 ]] || chown "$os_user" "$log_file"
	say "starting postgres on $HOST:$port (log: $log_file)"
	echo "postgres.sh: starting on $HOST:$port at $(date -u +%FT%TZ)" >>"$log_file"
	local timeout=${MEDIACTL_PG_START_TIMEOUT:-60}
	# -w waits for the server to start; listen on the loopback address only, and put
	# the unix socket in our own folder (the default one may not be writable).
	if ! as_owner "$bindir/pg_ctl" -D "$data_dir" -l "$log_file" -w -t "$timeout" \
		-o "-c listen_addresses=$HOST -c port=$port -c unix_socket_directories=$sock_dir -c fsync=off" \
		start >>"$log_file" 2>&1; then
		tail -n 20 "$log_file" >&2 || true
		die "postgres did not start; see $log_file"
	fi
	echo "$port" >"$port_file"

	local waited=0
	until "$bindir/pg_isready" -q -h "$HOST" -p "$port" -d postgres -U "$DB_USER"; do
		if ((waited >= timeout * 10)); then
			die "postgres does not accept connections on $HOST:$port after ${timeout}s; see $log_file"
		fi
		sleep 0.1
		waited=$((waited + 1))
	done

	local psql=$bindir/psql
	[[ -x $psql ]] || psql=$(command -v psql) || die "psql not found"
	if [[ $("$psql" -h "$HOST" -p "$port" -U "$DB_USER" -d postgres -XAtc "SELECT 1 FROM pg_database WHERE datname = '$DB'") != 1 ]]; then
		"$psql" -h "$HOST" -p "$port" -U "$DB_USER" -d postgres -Xqc "CREATE DATABASE $DB" >>"$log_file" 2>&1 ||
			die "could not create database $DB; see $log_file"
	fi
	say "postgres listening on $HOST:$port, database $DB"
	print_export
}

stop() {
	setup_user
	if running; then
		as_owner "$bindir/pg_ctl" -D "$data_dir" -m fast -w stop >>"$log_file" 2>&1 ||
			die "pg_ctl stop failed; see $log_file"
		say "stopped"
	else
		say "not running"
	fi
	# The cluster is throw-away: the next start creates a fresh one.
	rm -rf "$data_dir" "$sock_dir" "$port_file"
}

bindir=
os_user=
case ${1:-} in
start) start ;;
stop) stop ;;
status)
	setup_user # running runs pg_ctl as the cluster's owner
	status
	;;
*)
	echo "usage: $0 start|stop|status" >&2
	echo '  eval "$('"$0"' start)" starts PostgreSQL and exports MEDIACTL_TEST_POSTGRES_URL' >&2
	exit 2
	;;
esac
