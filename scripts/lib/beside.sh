# Work that runs beside scripts/test's phases, where those leave a core idle (a build beside
# tests that wait on servers and child processes, packaging beside the interop tests): its output
# goes to a log, printed whole when it is waited for so that it does not tangle with the output
# in front, its time is its own phase, and its process group is stopped by any exit. Sourced,
# not run; needs setup.sh's log and scripts/test's PHASES.
BESIDE=()
start_beside() {  # LOG COMMAND...
  local log="$1"
  shift
  rm -f "$log.seconds"
  # -e in the command itself: a shell function's failing step fails it (not under `||`).
  setsid bash -euo pipefail -c 'started=$SECONDS; "${@:2}"; echo "$((SECONDS - started))" > "$1.seconds"' beside "$log" "$@" \
    > "$log" 2>&1 < /dev/null &
  BESIDE+=("$!")
  BESIDE_PID=$!
}
finish_beside() {  # PID LOG PHASE
  local status=0 pid kept=()
  wait "$1" || status=$?
  # Waited for, its process id is free for any process of the machine to take (pid_max is 32768
  # on a machine that starts thousands a minute): stop_beside must not signal it at the exit.
  for pid in "${BESIDE[@]}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done
  BESIDE=("${kept[@]}")
  log "$3 (run beside the phases above): its output"
  cat "$2" >&2
  if [ "$status" -ne 0 ]; then
    log "error: $3 failed (exit $status): see its output above"
    exit "$status"
  fi
  PHASES+=("$(printf '%5d s  %s' "$(cat "$2.seconds")" "$3 (beside)")")
}
stop_beside() {
  local pid
  # The jobs not yet waited for: the group once setsid has made it; the process itself if the
  # run ends before that.
  for pid in "${BESIDE[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; done
}
