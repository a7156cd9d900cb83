# bench/lib.sh — what the benchmark scripts share, sourced by them (not run):
# die, need, and a SeaweedFS on 127.0.0.1 with the credentials mediactl and
# rclone use. Debian's rclone fails when AWS_CA_BUNDLE is set, so `rclone`
# here runs without it (and without a config file: remote "w:" is the server).

bench_name=${0##*/}

die() { echo "bench/$bench_name: $*" >&2; exit 1; }

# need CMD PACKAGE: installs PACKAGE with apt-get when CMD is missing. CMD is
# looked up on PATH only: `rclone` is also the function below.
need() {
  type -P "$1" >/dev/null && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    die "$1 missing: apt-get install -y $2"
  fi
  echo "bench/$bench_name: installing $2 with apt-get" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null; } ||
    die "apt-get install $2 failed"
}

rclone() { env -u AWS_CA_BUNDLE rclone --config /dev/null "$@"; }

# s3url BUCKET: the mediactl URL of BUCKET on the server.
s3url() { echo "s3://$1?endpoint=$endpoint&use_path_style=true&region=us-east-1"; }

# seaweedfs_up [--or-test-server]: the benchmarks' own SeaweedFS (run folder
# $BENCH_DIR/seaweedfs, so that a test run's stop leaves it alone), reused
# when it runs, else started (and stopped at exit); with --or-test-server, the
# test services' server is used when it answers and the benchmarks' is not
# running. Sets endpoint and the credentials of both tools. Buckets added to
# bench_buckets are purged at exit.
bench_buckets=()
seaweedfs_started=false
seaweedfs_up() {
  export SEAWEEDFS_RUN_DIR="$BENCH_DIR/seaweedfs"
  local exports
  if ! exports=$(scripts/services/seaweedfs.sh status 2>/dev/null); then
    if [ "${1:-}" = --or-test-server ] && [ -n "${MEDIACTL_TEST_SEAWEEDFS:-}" ] && curl -s -o /dev/null "$MEDIACTL_TEST_SEAWEEDFS"; then
      exports="export MEDIACTL_TEST_SEAWEEDFS=$MEDIACTL_TEST_SEAWEEDFS MEDIACTL_TEST_SEAWEEDFS_KEY=$MEDIACTL_TEST_SEAWEEDFS_KEY MEDIACTL_TEST_SEAWEEDFS_SECRET=$MEDIACTL_TEST_SEAWEEDFS_SECRET"
    else
      exports=$(scripts/services/seaweedfs.sh start)
      seaweedfs_started=true
    fi
  fi
  eval "$exports"
  endpoint=$MEDIACTL_TEST_SEAWEEDFS
  export RCLONE_CONFIG_W_TYPE=s3 RCLONE_CONFIG_W_PROVIDER=Other RCLONE_CONFIG_W_ENDPOINT="$endpoint"
  export RCLONE_CONFIG_W_ACCESS_KEY_ID="$MEDIACTL_TEST_SEAWEEDFS_KEY" RCLONE_CONFIG_W_SECRET_ACCESS_KEY="$MEDIACTL_TEST_SEAWEEDFS_SECRET"
  export RCLONE_CONFIG_W_FORCE_PATH_STYLE=true RCLONE_CONFIG_W_REGION=us-east-1
  export AWS_ACCESS_KEY_ID="$MEDIACTL_TEST_SEAWEEDFS_KEY" AWS_SECRET_ACCESS_KEY="$MEDIACTL_TEST_SEAWEEDFS_SECRET"
  export AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
  unset AWS_PROFILE AWS_SESSION_TOKEN
  trap seaweedfs_down EXIT
}

seaweedfs_down() {
  local b
  for b in "${bench_buckets[@]}"; do rclone purge "w:$b" >/dev/null 2>&1 || true; done
  if $seaweedfs_started; then scripts/services/seaweedfs.sh stop >/dev/null 2>&1 || true; fi
}
