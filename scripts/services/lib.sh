# lib.sh — helpers shared by the service scripts in this folder; sourced, not run.
# The sourcing script sets SERVICE (its name in messages), HOST, pid_file and
# PROCESS_PATTERN (a glob its server's command line matches).

die() {
	echo "$SERVICE: $*" >&2
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
