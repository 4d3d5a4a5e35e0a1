"""The chat app's registration workload, for scripts/bench-registry-postgres: the latency a user
feels when a device registers while a revoke runs, or while none does.

    bench_registry_app.py DSN USERS SECONDS OUT.json             a fixed window
    bench_registry_app.py DSN USERS --during OUT.json -- COMMAND  as long as COMMAND runs

Open loop at a steady rate (RATE transactions a second over WORKERS connections): each
transaction is due at a fixed time, and its latency runs from when it was due to its commit,
so a transaction held up by a lock also delays the ones queued behind it, as it would for the
app (no coordinated omission). One transaction is the seed's registerDevice followed by its
auto-rejoin: insert the device, then add it to every conversation its user is in."""
import json
import os
import random
import secrets
import subprocess
import sys
import threading
import time

import psycopg

RATE = float(os.environ.get("RATE", "100"))
WORKERS = int(os.environ.get("WORKERS", "4"))


def register(connection, user, device):
    with connection.transaction():
        connection.execute("INSERT INTO user_devices (user_did, device_id, device_mls_did, signature_public_key, last_seen) "
                           "VALUES (%s, %s, %s, %s, now())", (user, device, f"{user}#{device}", secrets.token_bytes(32)))
        connection.execute("INSERT INTO members (convo_id, member_mls_did, user_did, device_id) "
                           "SELECT DISTINCT convo_id, %s, %s, %s FROM members WHERE user_did = %s AND left_at IS NULL "
                           "ON CONFLICT DO NOTHING", (f"{user}#{device}", user, device, user))


def worker(number, dsn, users, horizon, latencies, errors):
    """Runs every transaction due before the horizon, however late: a worker held up by a lock
    catches up on its backlog, so the slowest transactions are counted, not dropped."""
    interval = WORKERS / RATE
    chooser = random.Random(number)
    with psycopg.connect(dsn, autocommit=True) as connection:
        due, count = time.monotonic(), 0
        while due <= horizon[0]:
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            user = f"did:plc:u{chooser.randrange(users)}"
            try:
                register(connection, user, f"bench-{os.getpid()}-{number}-{count}")
                latencies.append((due, time.monotonic() - due))
            except psycopg.Error as error:
                errors.append(f"{type(error).__name__}: {error}".splitlines()[0])
            count += 1
            due += interval


def main():
    dsn, users = sys.argv[1], int(sys.argv[2])
    during = sys.argv[3] == "--during"
    out = sys.argv[4]
    horizon, latencies, errors = [float("inf")], [], []
    threads = [threading.Thread(target=worker, args=(n, dsn, users, horizon, latencies, errors)) for n in range(WORKERS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    command_seconds, window = None, (started, float("inf"))
    if during:
        command = sys.argv[sys.argv.index("--") + 1:]
        time.sleep(1)  # the workload is steady before the command starts
        begun = time.monotonic()
        finished = subprocess.run(command, stdout=subprocess.DEVNULL)
        command_seconds = time.monotonic() - begun
        window = (begun, begun + command_seconds)
        if finished.returncode != 0:
            errors.append(f"the command exited {finished.returncode}")
        horizon[0] = window[1]
    else:
        horizon[0] = started + float(sys.argv[3])
    for thread in threads:
        thread.join()
    # In the --during form, only the transactions due while the command ran.
    ordered = sorted(latency for due, latency in latencies if window[0] <= due <= window[1])

    def percentile(p):
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else None

    result = {"rate": RATE, "workers": WORKERS, "seconds": time.monotonic() - started, "transactions": len(ordered),
              "errors": errors[:10], "error_count": len(errors), "p50_ms": percentile(50) * 1000 if ordered else None,
              "p99_ms": percentile(99) * 1000 if ordered else None, "max_ms": ordered[-1] * 1000 if ordered else None,
              "command_seconds": command_seconds}
    with open(out, "w") as file:
        json.dump(result, file, indent=2)
    print(json.dumps(result))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
