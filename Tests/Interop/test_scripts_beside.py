"""scripts/test's work beside its phases (scripts/lib/beside.sh): a job's failure is the run's,
with its output; a running job's process group is stopped at exit; and a job once waited for is
never signalled again, since its process id is then free for any other process of the machine
(pid_max is 32768 here, and a test run starts far more processes than that)."""
import subprocess

from workspace import ROOT

# setup.sh's log and scripts/test's PHASES, which beside.sh needs.
PRELUDE = 'log() { printf "%s\\n" "$*" >&2; }; PHASES=(); source scripts/lib/beside.sh\n'


def bash(script, tmp_path):
    return subprocess.run(["bash", "-euo", "pipefail", "-c", PRELUDE + script], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "OUT": str(tmp_path)}, stdin=subprocess.DEVNULL, timeout=60)


def test_a_job_waited_for_is_never_signalled_again(tmp_path):
    # kill recorded instead of sent: what stop_beside would signal at the run's exit.
    result = bash("""
        kill() { echo "kill $*" >> "$OUT/kills"; }
        start_beside "$OUT/ok.log" true
        finish_beside "$BESIDE_PID" "$OUT/ok.log" "a job that succeeds"
        start_beside "$OUT/failing.log" false
        failing=$BESIDE_PID
        trap stop_beside EXIT
        finish_beside "$failing" "$OUT/failing.log" "a job that fails"
    """, tmp_path)
    assert result.returncode == 1 and "error: a job that fails failed (exit 1)" in result.stderr, result.stderr
    assert not (tmp_path / "kills").exists(), (tmp_path / "kills").read_text()


def test_a_running_job_is_stopped_with_its_group(tmp_path):
    # The job's child (tail) blocks until signalled: the group's TERM ends both. The job says
    # it has started through a FIFO, so that it is stopped running, not while it starts.
    result = bash("""
        mkfifo "$OUT/started"
        start_beside "$OUT/running.log" bash -c 'echo > "$OUT/started"; tail -f /dev/null; echo not stopped'
        job=$BESIDE_PID
        read -r < "$OUT/started"
        stop_beside
        status=0
        wait "$job" || status=$?
        echo "status $status"
    """, tmp_path)
    assert result.returncode == 0 and result.stdout == "status 143\n", result.stderr
    assert "not stopped" not in (tmp_path / "running.log").read_text()


def test_a_failing_step_fails_the_job_and_its_output_is_printed(tmp_path):
    result = bash("""
        steps() { echo "first step"; false; echo "after the failing step"; }
        export -f steps
        start_beside "$OUT/steps.log" steps
        finish_beside "$BESIDE_PID" "$OUT/steps.log" "the steps"
        echo "not reached"
    """, tmp_path)
    assert result.returncode == 1, result.stderr
    assert "first step" in result.stderr and "after the failing step" not in result.stderr, result.stderr
    assert "error: the steps failed (exit 1)" in result.stderr and "not reached" not in result.stdout


def test_a_job_that_succeeds_is_a_phase_of_its_own(tmp_path):
    result = bash("""
        start_beside "$OUT/ok.log" echo "made"
        finish_beside "$BESIDE_PID" "$OUT/ok.log" "the package"
        printf '%s\\n' "${PHASES[@]}"
    """, tmp_path)
    assert result.returncode == 0 and "made" in result.stderr, result.stderr
    assert result.stdout.strip().endswith("s  the package (beside)"), result.stdout
