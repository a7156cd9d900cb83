# shellcheck shell=bash disable=SC2154 # the sourcing script sets pid_file and port_file
# lib.sh — helpers shared by the service scripts in this folder; sourced, not run.
# The sourcing script sets SERVICE (its name in messages), HOST and port_file, and
# defines print_export (its export line). running reads pid_file and
# PROCESS_PATTERN (a glob its server's command line matches); a script whose server
# has no pid file of ours (postgres.sh) defines its own running after sourcing.

say() {
	echo "$SERVICE: $*" >&2
}

die() {
	say "$@"
	exit 1
}

# port_open PORT: true when something accepts TCP connections on HOST:PORT.
port_open() {
	(exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

# running: true when the pid file names a live process of this server.
running() {
	[[ -s $pid_file ]] || return 1
	local pid
	pid=$(<"$pid_file")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	# Guard against a recycled pid: the process must be our server.
	if [[ -r /proc/$pid/cmdline ]]; then
		local cmdline
		cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline")
		# shellcheck disable=SC2053 # the pattern is a glob on purpose
		[[ $cmdline == $PROCESS_PATTERN ]] || return 1
	fi
	return 0
}

# serving: true when the server runs and accepts connections on the port it
# was started on. The port file is checked first: postgres.sh's running asks
# pg_ctl, which is not worth it when no port was ever recorded.
serving() {
	[[ -s $port_file ]] && running && port_open "$(<"$port_file")"
}

# pick_port VAR DEFAULT: prints the first port from $VAR (DEFAULT when unset)
# on which nothing listens, trying up to 100 of them.
pick_port() {
	local first=${!1:-$2} port last
	[[ $first =~ ^[0-9]+$ ]] || die "$1=$first is not a port number"
	port=$first
	last=$((port + 100))
	while port_open "$port"; do
		port=$((port + 1))
		((port < last)) || die "no free port in $first..$last on $HOST"
	done
	echo "$port"
}

# stop_pid PID [SECONDS]: SIGTERM, then SIGKILL if PID is still alive after
# SECONDS (default 15).
stop_pid() {
	local pid=$1 i
	kill "$pid" 2>/dev/null || true
	for ((i = 0; i < ${2:-15} * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

# status: prints the export line and succeeds when the server is serving.
status() {
	if serving; then
		print_export
		return 0
	fi
	say "not running"
	return 1
}
