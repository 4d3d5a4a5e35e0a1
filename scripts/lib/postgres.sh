# A throwaway PostgreSQL server for the registry's PostgreSQL tests (issue 13). Sourced after
# scripts/lib/setup.sh (it uses `log`), not run:
#
#   start_test_postgres   initdb and start a server in a new temporary folder; export HVT_TEST_PG*
#   stop_test_postgres    stop it and remove the folder (safe to call twice, or after a failed start)
#
# The server is Debian's newest installed PostgreSQL, tuned for speed over durability (nothing
# in it outlives the run). It listens on a Unix socket in its folder, where every role is
# trusted (the tests create and drop databases as the superuser `hvt`), and on 127.0.0.1 at a
# free port with scram-sha-256, so the tests can check that a password comes from a pgpass file
# and never from --db. What the tests get:
#
#   HVT_TEST_PGHOST            the socket folder (libpq's host=)
#   HVT_TEST_PGPORT            the port, of the socket and of 127.0.0.1
#   HVT_TEST_PGUSER            hvt, the superuser
#   HVT_TEST_PGPASSFILE        a pgpass file (0600) with the password of the role below
#   HVT_TEST_PGPASSWORD_ROLE   hvt_password, a login role reachable over TCP by password only
#
# TEST_POSTGRES_EXTRA_CONFIG, set before starting, adds lines to postgresql.conf (the benchmarks
# size the server for their data with it).

# PostgreSQL refuses to run as root; a run as root starts the server as this system user.
TEST_POSTGRES_OWNER=hvt-postgres
TEST_POSTGRES_DIR=""

start_test_postgres() {
  local bin port
  bin="$(newest_postgres_bin)" || return 1
  port="$(free_tcp_port)"
  # In /tmp, not $TMPDIR: the socket's path must stay under the kernel's 107 bytes, and the
  # server's owner must be able to reach the folder (a private $TMPDIR would be 0700 root's).
  TEST_POSTGRES_DIR="$(mktemp -d /tmp/hvt-postgres.XXXXXX)"
  ensure_test_postgres_owner
  log "starting a throwaway PostgreSQL ($(basename "$(dirname "$bin")")) in $TEST_POSTGRES_DIR, port $port"

  # --no-sync: the cluster is thrown away, so initdb need not wait for the disk either.
  as_test_postgres_owner "$bin/initdb" -D "$TEST_POSTGRES_DIR/data" -U hvt --no-locale --encoding=UTF8 \
    --no-sync --no-instructions >"$TEST_POSTGRES_DIR/initdb.log" 2>&1 || {
    log "error: initdb failed:"; tail -n 20 "$TEST_POSTGRES_DIR/initdb.log" >&2; return 1
  }
  write_test_postgres_config "$port"
  as_test_postgres_owner "$bin/pg_ctl" -D "$TEST_POSTGRES_DIR/data" -l "$TEST_POSTGRES_DIR/server.log" \
    -w -t 60 start >/dev/null || {
    log "error: the test PostgreSQL server did not start; the end of its log:"
    tail -n 30 "$TEST_POSTGRES_DIR/server.log" >&2; return 1
  }

  export HVT_TEST_PGHOST="$TEST_POSTGRES_DIR" HVT_TEST_PGPORT="$port" HVT_TEST_PGUSER=hvt
  export HVT_TEST_PGPASSWORD_ROLE=hvt_password HVT_TEST_PGPASSFILE="$TEST_POSTGRES_DIR/pgpass"
  create_password_role "$bin"
}

stop_test_postgres() {
  [ -n "$TEST_POSTGRES_DIR" ] || return 0
  if [ -f "$TEST_POSTGRES_DIR/data/postmaster.pid" ]; then
    # Immediate: nothing in the cluster is worth a clean shutdown.
    as_test_postgres_owner "$(newest_postgres_bin)/pg_ctl" -D "$TEST_POSTGRES_DIR/data" -m immediate stop \
      >/dev/null 2>&1 || log "warning: could not stop the test PostgreSQL server in $TEST_POSTGRES_DIR"
  fi
  rm -rf "$TEST_POSTGRES_DIR"
  TEST_POSTGRES_DIR=""
  unset HVT_TEST_PGHOST HVT_TEST_PGPORT HVT_TEST_PGUSER HVT_TEST_PGPASSFILE HVT_TEST_PGPASSWORD_ROLE
}

# Debian installs each major version side by side under /usr/lib/postgresql/N.
newest_postgres_bin() {
  local newest
  newest="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -x "$newest/initdb" ] || { log "error: no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)"; return 1; }
  echo "$newest"
}

ensure_test_postgres_owner() {
  [ "$(id -u)" -eq 0 ] || return 0
  id -u "$TEST_POSTGRES_OWNER" >/dev/null 2>&1 ||
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
      "$TEST_POSTGRES_OWNER"
  # The folder stays 0700 (mktemp's mode): only its owner and root reach the trusted socket.
  chown "$TEST_POSTGRES_OWNER:" "$TEST_POSTGRES_DIR"
}

# Runs from the server's folder, so the server owner never needs the caller's working directory.
as_test_postgres_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd "$TEST_POSTGRES_DIR" && runuser -u "$TEST_POSTGRES_OWNER" -- "$@")
  else
    (cd "$TEST_POSTGRES_DIR" && "$@")
  fi
}

write_test_postgres_config() {
  local port="$1"
  cat >>"$TEST_POSTGRES_DIR/data/postgresql.conf" <<EOF

# scripts/lib/postgres.sh: a throwaway test server, fast rather than durable.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$TEST_POSTGRES_DIR'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 100
shared_buffers = 128MB
${TEST_POSTGRES_EXTRA_CONFIG:-}
EOF
  # Trust on the socket only; over TCP a password is always asked for.
  cat >"$TEST_POSTGRES_DIR/data/pg_hba.conf" <<EOF
local all all                trust
host  all all 127.0.0.1/32   scram-sha-256
EOF
}

# The password goes to psql on standard input and into a file only the caller can read, never
# into a command line that `ps` would show.
create_password_role() {
  local bin="$1" password
  password="$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  "$bin/psql" -X -q -v ON_ERROR_STOP=1 "host=$HVT_TEST_PGHOST port=$HVT_TEST_PGPORT user=hvt dbname=postgres" \
    <<<"CREATE ROLE $HVT_TEST_PGPASSWORD_ROLE LOGIN PASSWORD '$password';" || {
    log "error: could not create the role $HVT_TEST_PGPASSWORD_ROLE on the test PostgreSQL server"; return 1
  }
  (umask 077 && echo "127.0.0.1:$HVT_TEST_PGPORT:*:$HVT_TEST_PGPASSWORD_ROLE:$password" >"$HVT_TEST_PGPASSFILE")
}
