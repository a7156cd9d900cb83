#!/usr/bin/env bash
# seaweedfs.sh — run a local SeaweedFS (a production S3-compatible store) for mediactl's
# tests and benchmarks.
#
# Usage:
#   eval "$(scripts/services/seaweedfs.sh start)"  # builds if needed, starts, exports the variables below
#   scripts/services/seaweedfs.sh status           # prints the export line if running, exits 1 otherwise
#   scripts/services/seaweedfs.sh stop             # stops it and deletes its data
#
# The start line exports:
#   MEDIACTL_TEST_SEAWEEDFS         the S3 endpoint, e.g. http://127.0.0.1:8333
#   MEDIACTL_TEST_SEAWEEDFS_KEY     the access key id the server accepts (mediactl-test)
#   MEDIACTL_TEST_SEAWEEDFS_SECRET  its secret key (mediactl-test-secret)
# A bucket URL for gocloud/mediactl is then
#   s3://BUCKET?endpoint=$MEDIACTL_TEST_SEAWEEDFS&use_path_style=true&region=us-east-1
# with AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY set to the key pair. The server requires
# SigV4 signatures with exactly that pair (it is the one admin identity, read by
# `weed mini` from its own environment); anonymous requests are refused. It starts with
# one bucket, "mediactl", and lets any signed request create more.
#
# `weed` is built from source (github.com/seaweedfs/seaweedfs at $WEED_VERSION) into a
# cache folder: $MEDIACTL_CACHE_DIR if set, else the repository's .cache/ folder. Its
# go.mod has a replace directive, which `go install` refuses, so the build runs in a
# throw-away module (<cache>/seaweedfs/src) that repeats it. The first build takes
# about 5 minutes and 2.2 GB of RAM on 2 cores, module downloads included (5 min 21 s
# measured, 164 MB binary); later starts reuse <cache>/seaweedfs/$WEED_VERSION/weed.
# The server (`weed mini`: master, volume, filer and S3 gateway in one process)
# listens on 127.0.0.1 only, keeps its data in <cache>/seaweedfs/run/data (wiped on
# start and on stop), and logs to <cache>/seaweedfs/run/weed.log. Only the export
# line is written to stdout.
#
# Environment:
#   WEED_BIN                 a prebuilt weed to run instead of building one
#   SEAWEEDFS_PORT           first S3 port to try (default 8333; the next free one is used if busy)
#   SEAWEEDFS_START_TIMEOUT  seconds to wait for the server to be ready (default 120)
#   SEAWEEDFS_RUN_DIR        folder of the server's pid, port, log and data (default
#                            <cache>/seaweedfs/run): another folder is another server,
#                            e.g. a benchmark's, which a test run's stop leaves alone
#   MEDIACTL_CACHE_DIR       cache root (default: <repo>/.cache)
set -euo pipefail

WEED_MODULE=github.com/seaweedfs/seaweedfs
WEED_VERSION=v0.0.0-20261109003541-7506e5f91cd6
HOST=127.0.0.1
ACCESS_KEY=mediactl-test
SECRET_KEY=mediactl-test-secret
BUCKET=mediactl

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cache_root=${MEDIACTL_CACHE_DIR:-$repo_root/.cache}
weed_root=$cache_root/seaweedfs
src_dir=$weed_root/src
bin=$weed_root/$WEED_VERSION/weed
# WEED_BIN names a prebuilt weed to use instead of building one.
if [[ -n ${WEED_BIN:-} ]]; then
	[[ -x $WEED_BIN ]] || { echo "seaweedfs.sh: WEED_BIN=$WEED_BIN is not an executable" >&2; exit 1; }
	bin=$WEED_BIN
fi
run_dir=$(realpath -m -- "${SEAWEEDFS_RUN_DIR:-$weed_root/run}")
data_dir=$run_dir/data
pid_file=$run_dir/weed.pid
port_file=$run_dir/weed.port
log_file=$run_dir/weed.log
build_log=$weed_root/build.log
lock_file=$weed_root/lock

SERVICE=seaweedfs.sh
PROCESS_PATTERN='*weed*mini*'
# shellcheck source=lib.sh
source "$script_dir/lib.sh"

# lock: serialises builds and starts of concurrent callers (scripts/test.sh and a
# benchmark, say) on the same cache. Held until the script exits.
lock() {
	mkdir -p "$weed_root"
	command -v flock >/dev/null || return 0
	exec 9>"$lock_file"
	flock 9
}

# user_bin is the same build kept in the user's cache folder, shared by every
# clone: a new clone finds it there instead of building again.
user_bin=${XDG_CACHE_HOME:-$HOME/.cache}/mediactl/seaweedfs/$WEED_VERSION/weed

build() {
	[[ -x $bin ]] && return 0
	if [[ -z ${WEED_BIN:-} && -x $user_bin ]]; then
		mkdir -p "$(dirname "$bin")"
		cp "$user_bin" "$bin.tmp.$$" && mv "$bin.tmp.$$" "$bin"
		echo "seaweedfs.sh: weed $WEED_VERSION from $user_bin" >&2
		return 0
	fi
	command -v go >/dev/null || die "go not found: install Go first"
	mkdir -p "$cache_root" "$weed_root"
	# Keep the cache out of git without touching the repository's .gitignore.
	[[ -e $cache_root/.gitignore ]] || printf '*\n' >"$cache_root/.gitignore"
	echo "seaweedfs.sh: building $WEED_MODULE/weed@$WEED_VERSION into $bin (about 5 minutes; log: $build_log)" >&2
	rm -rf "$src_dir"
	mkdir -p "$src_dir"
	# The replace is SeaweedFS's own: go-bip39's original repository is gone.
	cat >"$src_dir/go.mod" <<-EOF
		module mediactl.invalid/weedbuild

		go 1.26

		require $WEED_MODULE $WEED_VERSION

		replace github.com/tyler-smith/go-bip39 => github.com/cosmos/go-bip39 v1.0.0
	EOF
	local start=$SECONDS tmp=$bin.tmp.$$
	mkdir -p "$(dirname "$bin")"
	if ! (cd "$src_dir" && GOWORK=off GOFLAGS=-mod=mod \
		go build -trimpath -ldflags='-s -w' -o "$tmp" "$WEED_MODULE/weed") >"$build_log" 2>&1; then
		rm -f "$tmp"
		tail -n 20 "$build_log" >&2 || true
		die "building weed failed; see $build_log"
	fi
	mv "$tmp" "$bin"
	echo "seaweedfs.sh: built weed in $((SECONDS - start)) s" >&2
	# For the next clone: kept in the user's cache too (best effort).
	if mkdir -p "$(dirname "$user_bin")" 2>/dev/null && cp "$bin" "$user_bin.tmp.$$" 2>/dev/null; then
		mv "$user_bin.tmp.$$" "$user_bin"
	fi
}

print_export() {
	echo "export MEDIACTL_TEST_SEAWEEDFS=http://$HOST:$(<"$port_file") MEDIACTL_TEST_SEAWEEDFS_KEY=$ACCESS_KEY MEDIACTL_TEST_SEAWEEDFS_SECRET=$SECRET_KEY"
}

start() {
	lock
	mkdir -p "$run_dir"
	if serving; then
		print_export
		return 0
	fi
	# A weed that is alive but not serving is stopped before a new one takes its data.
	if running; then
		stop_pid "$(<"$pid_file")"
	fi
	rm -f "$pid_file" "$port_file"
	build

	local port
	port=$(pick_port SEAWEEDFS_PORT 8333)

	rm -rf "$data_dir"
	mkdir -p "$data_dir"
	touch "$log_file"
	local log_start
	log_start=$(stat -c %s "$log_file")
	echo "seaweedfs.sh: starting weed mini, S3 on $HOST:$port, at $(date -u +%FT%TZ)" >>"$log_file"
	# Started from the run folder, so that nothing weed writes lands in the caller's cwd.
	# Its other services (master 9333, volume 9340, filer 8888, admin 12535 and their
	# gRPC ports +10000) move to the next free port by themselves when theirs is taken.
	# The environment is cleaned of the caller's AWS settings: the one identity the
	# server accepts is the key pair given here.
	cd "$run_dir"
	nohup env -u AWS_SESSION_TOKEN -u AWS_PROFILE -u AWS_CONFIG_FILE -u AWS_SHARED_CREDENTIALS_FILE \
		AWS_ACCESS_KEY_ID="$ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$SECRET_KEY" \
		"$bin" mini -dir="$data_dir" \
		-ip="$HOST" -ip.bind="$HOST" -s3.port="$port" \
		-master.telemetry=false -webdav=false -admin.ui=false \
		-s3.port.iceberg=0 -s3.port.lance=0 -admin.port.legacy=0 \
		-master.volumeSizeLimitMB=64 -bucket="$BUCKET" \
		</dev/null >>"$log_file" 2>&1 9>&- &
	local pid=$!
	echo "$pid" >"$pid_file"
	echo "$port" >"$port_file"

	# Ready when weed prints its banner: it does so once every service is up and the
	# bucket exists.
	local timeout=${SEAWEEDFS_START_TIMEOUT:-120} waited=0
	until port_open "$port" && tail -c +$((log_start + 1)) "$log_file" | grep -q 'running and ready to use'; do
		if ! kill -0 "$pid" 2>/dev/null; then
			rm -f "$pid_file" "$port_file"
			tail -n 20 "$log_file" >&2 || true
			die "weed exited during startup; see $log_file"
		fi
		if ((waited >= timeout * 10)); then
			stop_pid "$pid"
			rm -f "$pid_file" "$port_file"
			die "weed was not ready on $HOST:$port within ${timeout}s; see $log_file"
		fi
		sleep 0.1
		waited=$((waited + 1))
	done
	echo "seaweedfs.sh: weed mini (pid $pid) serving S3 on $HOST:$port" >&2
	print_export
}

stop() {
	lock
	if ! running; then
		rm -f "$pid_file" "$port_file"
		rm -rf "$data_dir"
		echo "seaweedfs.sh: not running" >&2
		return 0
	fi
	local pid
	pid=$(<"$pid_file")
	stop_pid "$pid"
	rm -f "$pid_file" "$port_file"
	rm -rf "$data_dir"
	echo "seaweedfs.sh: stopped (pid $pid)" >&2
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	echo '  eval "$('"$0"' start)" starts SeaweedFS and exports MEDIACTL_TEST_SEAWEEDFS{,_KEY,_SECRET}' >&2
	exit 2
	;;
esac
