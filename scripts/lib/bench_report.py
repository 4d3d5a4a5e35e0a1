"""Turns scripts/bench's hyperfine exports into bench/results.json and the table in docs/performance.md.
Usage: bench_report.py RESULTS_DIR MIGRATE_VAULTS CENSUS_FILES RESULTS_JSON DOCUMENT S3_VAULTS S3_OBJECTS

A benchmark this run did not measure (ONLY=…, SKIP_…) keeps its figures from the previous
bench/results.json, and its row says from which run."""
import datetime
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

results_dir, migrate_count, census_count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
results_json, document = Path(sys.argv[4]), Path(sys.argv[5])
s3_vaults, s3_objects = int(sys.argv[6]), int(sys.argv[7])


def load(name):
    path = results_dir / f"{name}.json"
    if not path.exists():
        return None
    runs = json.loads(path.read_text())["results"]
    rss = [(results_dir / f"{name}.{which}.rss") for which in ("ours", "peer")]
    rss = [int(p.read_text().split()[-1]) // 1024 if p.exists() else None for p in rss]
    return {"ours": {"command": runs[0]["command"], "median_s": runs[0]["median"], "runs": len(runs[0]["times"]), "max_rss_mib": rss[0]},
            "peer": {"command": runs[1]["command"], "median_s": runs[1]["median"], "runs": len(runs[1]["times"]), "max_rss_mib": rss[1]}
            if len(runs) > 1 else None}


def machine():
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.machine())
    memory = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")) // (1024 * 1024)
    system = next((line.split("=", 1)[1].strip().strip('"') for line in open("/etc/os-release") if line.startswith("PRETTY_NAME")), "Linux")
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return f"{system}, {os.cpu_count()} cores ({model}), {memory} GiB; {swift}; {datetime.date.today().isoformat()}"


rows, record = [], {"machine": machine(), "benchmarks": {}}
previous = json.loads(results_json.read_text()) if results_json.exists() else {"benchmarks": {}}
# A sheet's goals are its own times: the PNG no slower than the hand-laid page of old (112.9 ms,
# 2026-11-23), the PDF at most 50 ms.
SHEETS = {"sheet-pdf": 0.050, "sheet-png": 0.1129}
GOALS = { "open": ("ratio", 1.5), "registry": ("ratio", 1.1), "registry-since": ("ratio", 1.1),
         "registry-small": ("ratio", 1.1), "registry-since-small": ("ratio", 1.1), "registry-pg-revoke-small": ("ratio", 1.2),
         "registry-pg-revoke": ("ratio", 1.2), "registry-pg-import": ("ratio", 1.5), "plan": ("seconds", 1.0),
         "registry-fm": ("ratio", 1.1), "registry-fm-since": ("ratio", 1.1), "registry-fm-pg": ("ratio", 1.2), "registry-fm-pg-since": ("ratio", 1.2)}
# The batch migration's floor (issue 29): the steps Sources/vault-floor times alone, summed and
# divided by the cores; the tool should be within 2x of it, and 3x faster than the PyNaCl script.
FLOOR_STEPS = ["read", "open", "parse", "fields", "write", "seal", "create", "durability"]


def floor_of(results_dir):
    """Each step's median over vault-floor's runs (microseconds a vault), or None."""
    runs = [json.loads(path.read_text()) for path in sorted(results_dir.glob("migrate-floor.*.json"))]
    if not runs:
        return None
    steps = {step: sorted(run["microsecondsPerVault"][step] for run in runs)[len(runs) // 2] for step in FLOOR_STEPS}
    return {"vaults": runs[0]["vaults"], "groupSize": runs[0]["groupSize"], "cores": os.cpu_count(), "runs": len(runs),
            "microsecondsPerVault": steps}


def load_migrate(results_dir):
    """The tool and the PyNaCl script flushed and not (one hyperfine run), with the floor."""
    path = results_dir / "migrate.json"
    if not path.exists():
        return None
    runs = json.loads(path.read_text())["results"]
    rss = results_dir / "migrate.ours.rss"
    side = lambda run, memory=None: {"command": run["command"], "median_s": run["median"], "runs": len(run["times"]), "max_rss_mib": memory}
    return {"ours": side(runs[0], int(rss.read_text().split()[-1]) // 1024 if rss.exists() else None),
            "peer": side(runs[1]), "peer_unflushed": side(runs[2]), "floor": floor_of(results_dir)}


carried = False


def add(name, what, figure, goal_text, met):
    if record["benchmarks"][name].get("measured"):
        what += f" ‡ ({record['benchmarks'][name]['measured']})"
    rows.append((what, figure, goal_text, "met" if met else ("**missed**" if met is not None else "—")))


def above_floor(ratio):
    """How far a job whose peer is its floor (the same work by hand, or the headers alone) is above it."""
    return f", {(ratio - 1) * 100:.0f}% above the floor (the peer)" if ratio >= 1 else ", at or below the floor (the peer)"


def latency(name):
    path = results_dir / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


# A revoke's peak memory may not grow with the registry (issue 48).
MEMORY_GOAL_MIB = 64


def peak_memory(name):
    """Peak memory alone: the 1,000,000-device revoke's (measured beside its timing, as
    `registry`) or the 10,000,000-device one's."""
    stem = "registry" if name == "registry-memory" else name
    files = [results_dir / f"{stem}.{which}.rss" for which in ("ours", "peer")]
    if not all(f.exists() for f in files):
        return None
    ours, peer = (int(f.read_text().split()[-1]) // 1024 for f in files)
    return {"ours_mib": ours, "peer_mib": peer}


# Sizes (issue 48, item 5), in MB (10^6 bytes).
SIZE_GOALS_MB = {"tool": 12, "package": 20, "image": 35}


def sizes():
    path = results_dir / "sizes.json"
    return json.loads(path.read_text()) if path.exists() else None


def megabytes(count):
    return f"{count / 1e6:.1f} MB" if count is not None else "?"


def add_sizes(name, data):
    """Three rows: the tools stripped, the packages, the image; each beside Debian's age, restic
    and rclone (their stripped binaries, their .debs)."""
    global carried
    peers = {peer: figures for peer, figures in data["peers"].items() if figures}
    def beside(what):
        shown = ", ".join(f"{peer} {figures['version']} {megabytes(figures[what])}" for peer, figures in peers.items())
        return f" vs {shown}" if shown else " (the peers' packages could not be downloaded)"
    tools, goal = data["tools"], SIZE_GOALS_MB["tool"]
    add(name, "each tool's size, stripped (`strip`), vs Debian's age, restic and rclone binaries stripped the same way",
        ", ".join(f"{tool} {megabytes(size)}" for tool, size in tools.items()) + beside("binary"),
        f"each ≤ {goal} MB (issue 48)", max(tools.values()) <= goal * 1e6)
    packages, goal = data["packages"], SIZE_GOALS_MB["package"]
    add(name, "the Debian packages (`.deb`) vs Debian's age, restic and rclone packages",
        ", ".join(f"{package} {megabytes(size)}" for package, size in packages.items()) + beside("package"),
        f"each ≤ {goal} MB (issue 48)", bool(packages) and max(packages.values()) <= goal * 1e6 if packages else None)
    # The image is built only by scripts/image (minutes): a run without it keeps the last figure,
    # dated, as any row not measured (it said "not built" and lost it).
    what = "the fleet image, compressed (scripts/image's archive; restic's and rclone's below)"
    earlier = previous["benchmarks"].get("sizes", {})
    if data["image"] is None and earlier.get("image") is not None:
        carried = True
        data["image"] = earlier["image"]
        data["imageMeasured"] = earlier.get("imageMeasured") or earlier.get("measured") or previous["machine"].rsplit("; ", 1)[-1]
    if data.get("imageMeasured"):
        what += f" ‡ ({data['imageMeasured']})"
    image, goal = data["image"], SIZE_GOALS_MB["image"]
    add(name, what, megabytes(image) if image is not None else "not built (scripts/image)", f"≤ {goal} MB (issue 48)",
        image <= goal * 1e6 if image is not None else None)


def rss(side):
    return f"{side['max_rss_mib']} MiB" if side and side["max_rss_mib"] is not None else "?"


STARTUPS = [f"startup-{tool}" for tool in ("vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link")]
# A record from before the PyNaCl peer kept the one-process-per-vault row as "migrate".
if "peer_unflushed" not in previous["benchmarks"].get("migrate", {"peer_unflushed": None}):
    previous["benchmarks"].setdefault("migrate-loop", previous["benchmarks"].pop("migrate"))
for name in [*SHEETS, *STARTUPS, "open-small", "open", "migrate", "migrate-loop", "s3-migrate", "census", "s3-census", "fleet-list",
             "fleet-shards", "fleet-check", "registry-small", "registry-since-small", "registry", "registry-since", "registry-pg-revoke-small",
             "registry-pg-revoke", "registry-pg-import", "registry-pg-latency", "registry-fm", "registry-fm-since", "registry-fm-pg",
             "registry-fm-pg-since", "registry-memory", "registry-memory-10m", "plan", "sizes"]:
    data = (latency(name) if name == "registry-pg-latency" else load_migrate(results_dir) if name == "migrate"
            else peak_memory(name) if name.startswith("registry-memory") else sizes() if name == "sizes" else load(name))
    if not data and name in previous["benchmarks"]:
        data = dict(previous["benchmarks"][name])
        data.setdefault("measured", previous["machine"].rsplit("; ", 1)[-1])
        carried = True
    if not data:
        continue
    if name == "registry-pg-latency":
        record["benchmarks"][name] = data
        quiet, busy = data["quiet"], data["revoke"]
        add(name, f"registry on PostgreSQL: latency of the app's device registrations ({quiet['rate']:.0f}/s over {quiet['workers']} "
            f"connections, each a device and its rejoins), quiet vs while a revoke of {data['revoked']:,} devices runs",
            f"p50 {quiet['p50_ms']:.1f} ms, p99 {quiet['p99_ms']:.1f} ms vs p50 {busy['p50_ms']:.1f} ms, p99 {busy['p99_ms']:.1f} ms "
            f"(max {busy['max_ms']:.0f} ms; {quiet['error_count'] + busy['error_count']} errors)"
            # A window in which no registration committed has no percentiles: say so, do not crash.
            if quiet["p50_ms"] is not None and busy["p50_ms"] is not None else
            f"no registration committed ({quiet['error_count'] + busy['error_count']} errors: {(quiet['errors'] + busy['errors'])[:1]})",
            "reported", None)
        continue
    if name == "sizes":
        record["benchmarks"][name] = data
        add_sizes(name, data)
        continue
    if name.startswith("registry-memory"):
        record["benchmarks"][name] = data
        size = "10,000,000" if name.endswith("10m") else "1,000,000"
        add(name, f"peak memory of `device-revoker registry revoke` of a tenth of {size} devices (`--devices-file`) vs hand-written SQL in `sqlite3`",
            f"{data['ours_mib']} MiB vs {data['peer_mib']} MiB", f"≤ {MEMORY_GOAL_MIB} MiB", data["ours_mib"] <= MEMORY_GOAL_MIB)
        continue
    ours, peer = data["ours"], data["peer"]
    entry = dict(data)
    if peer:
        entry["ratio"] = ours["median_s"] / peer["median_s"]
    record["benchmarks"][name] = entry
    if name == "migrate":
        count = entry.setdefault("vaults", migrate_count)
        flushed, unflushed = peer["median_s"] / ours["median_s"], entry["peer_unflushed"]["median_s"] / ours["median_s"]
        entry.update(ours_per_s=count / ours["median_s"], faster_than_flushed=flushed, faster_than_unflushed=unflushed)
        add(name, f"batch migration of {count:,} vaults v1→v2: `migrate --manifest` (journal, a syncfs per group of 64) vs an in-process "
            "PyNaCl script writing by rename, flushed the same way (one syncfs per 64 outputs)",
            f"{ours['median_s']:.2f} s ({count / ours['median_s']:,.0f} vaults/s, {rss(ours)}) vs {peer['median_s']:.2f} s: "
            f"**{flushed:.2f}× faster**", "≥ 3× faster", flushed >= 3)
        add(name, f"the same batch vs the same script without any flush (its outputs named before they are on disk)",
            f"{ours['median_s']:.2f} s vs {entry['peer_unflushed']['median_s']:.2f} s: **{unflushed:.2f}× faster**", "reported", None)
        floor = entry.get("floor")
        if floor:
            steps = floor["microsecondsPerVault"]
            total = sum(steps.values()) * count / floor["cores"] / 1e6
            above = ours["median_s"] / total
            entry.update(floor_s=total, times_floor=above)
            add(name, f"the same batch vs its floor: the unavoidable steps of {count:,} vaults timed alone (`vault-floor`, µs a vault: "
                + ", ".join(f"{step} {steps[step]:.1f}" for step in FLOOR_STEPS) + f"), summed and divided by {floor['cores']} cores",
                f"{ours['median_s']:.2f} s vs a floor of {total:.2f} s: **{(above - 1) * 100:.0f}% above the floor ({above:.1f}×)**",
                "within 2× of the floor", above <= 2)
    elif name == "migrate-loop":
        count = entry.setdefault("vaults", migrate_count)
        batch, loop = count / ours["median_s"], count / peer["median_s"]
        entry.update(ours_per_s=batch, peer_per_s=loop)
        add(name, f"batch migration of {count:,} vaults v1→v2: one `migrate --manifest` run vs one process per vault",
            f"{ours['median_s']:.2f} s ({batch:,.0f} vaults/s, {rss(ours)}) vs {peer['median_s']:.2f} s ({loop:,.0f} vaults/s): "
            f"**{peer['median_s'] / ours['median_s']:.1f}× faster**", "≥ 20× faster", peer["median_s"] / ours["median_s"] >= 20)
    elif name == "open-small":
        add(name, "`vault-tool open` of the example household (3 KB): start-up and one small vault's work, vs `age -d` of as many bytes",
            f"{ours['median_s'] * 1000:.1f} ms ({rss(ours)}) vs {peer['median_s'] * 1000:.1f} ms ({rss(peer)}): **{entry['ratio']:.2f}×**",
            "≤ 1.0× (issue 48)", entry["ratio"] <= 1.0)
    elif name == "s3-migrate":
        count = entry.setdefault("vaults", s3_vaults)
        batch, loop = count / ours["median_s"], count / peer["median_s"]
        entry.update(ours_per_s=batch, peer_per_s=loop)
        add(name, f"bucket migration of {count:,} vaults v1→v2 in place (SeaweedFS on this machine): `migrate --source s3://… --in-place` "
            "vs download, `vault-tool migrate`, conditional upload per vault (boto3)",
            f"{ours['median_s']:.2f} s ({batch:,.0f} vaults/s) vs {peer['median_s']:.2f} s ({loop:,.0f} vaults/s): "
            f"**{peer['median_s'] / ours['median_s']:.1f}× faster**", "≥ 30× faster", peer["median_s"] / ours["median_s"] >= 30)
    elif name == "s3-census":
        count = entry.setdefault("objects", s3_objects)
        add(name, f"`vault-tool census` of {count:,} objects in a bucket vs a boto3 script that lists them and reads each header (ranged GET)",
            f"{ours['median_s']:.2f} s ({count / ours['median_s']:,.0f} objects/s) vs {peer['median_s']:.2f} s: "
            f"**{peer['median_s'] / ours['median_s']:.1f}× faster**", "faster", ours["median_s"] < peer["median_s"])
    elif name == "fleet-list":
        count = entry.setdefault("objects", s3_objects)
        add(name, f"listing {count:,} keys in a bucket: one shard of four (`migrate --shard 1/4`, its run of keys) vs the whole prefix",
            f"{ours['median_s']:.2f} s vs {peer['median_s']:.2f} s: **{entry['ratio']:.2f}×**", "≈ 1/4 (≤ 0.35×)", entry["ratio"] <= 0.35)
    elif name == "fleet-shards":
        count = entry.setdefault("vaults", s3_vaults)
        add(name, f"bucket migration of {count:,} vaults in place: four `--shard I/4` processes at once vs one process (2 cores, "
            "SeaweedFS on the same machine)",
            f"{ours['median_s']:.2f} s ({count / ours['median_s']:,.0f} vaults/s) vs {peer['median_s']:.2f} s ({count / peer['median_s']:,.0f} vaults/s): "
            f"**{peer['median_s'] / ours['median_s']:.2f}× faster**", "reported (bound: see below)", None)
    elif name == "fleet-check":
        count = entry.setdefault("vaults", s3_objects)
        add(name, f"rolling check of one slice of four of {count:,} vaults (`check --subset 1/4`: each read and opened) vs boto3 listing the "
            "same slice and decrypting each vault with PyNaCl, 16 threads",
            f"{ours['median_s']:.2f} s vs {peer['median_s']:.2f} s: **{peer['median_s'] / ours['median_s']:.1f}× faster**", "faster",
            ours["median_s"] < peer["median_s"])
    elif name == "census":
        rate = census_count / ours["median_s"]
        entry.update(ours_per_s=rate)
        add(name, f"`vault-tool census` of {census_count:,} files vs `find \\| xargs head -c 10` (reading the headers only)",
            f"{ours['median_s']:.2f} s ({rate:,.0f} files/s, {rss(ours)}) vs {peer['median_s']:.2f} s ({rss(peer)}): **{entry['ratio']:.2f}×**"
            + above_floor(entry["ratio"]),
            "none (the peer is a floor)", None)
    elif name in STARTUPS:
        tool = name.removeprefix("startup-")
        add(name, f"`{tool} --version` vs `age --version`: process start-up alone",
            f"{ours['median_s'] * 1000:.1f} ms ({rss(ours)}) vs {peer['median_s'] * 1000:.1f} ms ({rss(peer)}): **{entry['ratio']:.2f}×**",
            "≤ 1.0× (issue 48)", entry["ratio"] <= 1.0)
    elif name in SHEETS:
        form = name.removeprefix("sheet-").upper()
        goal = SHEETS[name]
        add(name, f"`recovery-sheet generate` of an A4 {form} (300 dpi) vs qrencode + ImageMagick setting the same page ({form})",
            f"{ours['median_s'] * 1000:.1f} ms ({rss(ours)}) vs {peer['median_s'] * 1000:.1f} ms ({rss(peer)}): **{entry['ratio']:.2f}×**",
            f"≤ {goal * 1000:.0f} ms" if goal < 0.1 else f"≤ {goal * 1000:.1f} ms (the page of old)", ours["median_s"] <= goal)
    elif name == "plan":
        goal = GOALS[name][1]
        add(name, "`rotation-planner plan`, 50 devices × 500 groups of 10", f"{ours['median_s']:.3f} s ({rss(ours)})", f"< {goal:.0f} s",
            ours["median_s"] < goal)
    else:
        labels = {"open": "`vault-tool open` of a 480 KB household (50 devices, 20 children, 500 groups of 10) vs `age -d` of the same size",
                  "registry-small": "`device-revoker registry revoke` of 10,000 of 100,000 devices (`--devices-file`) vs hand-written SQL in `sqlite3`",
                  "registry-since-small": "`device-revoker registry revoke --not-seen-since` (10,000 of 100,000 devices) vs hand-written SQL in `sqlite3`",
                  "registry-pg-revoke-small": "registry on PostgreSQL: `revoke` of 10,000 of 100,000 devices (500,000 memberships) vs the same change by hand in `psql`",
                  "registry": "`device-revoker registry revoke` of 100,000 of 1,000,000 devices (`--devices-file`) vs hand-written SQL in `sqlite3`",
                  "registry-since": "`device-revoker registry revoke --not-seen-since` (100,000 of 1,000,000 devices) vs hand-written SQL in `sqlite3`",
                  "registry-pg-revoke": "registry on PostgreSQL: `revoke` of 100,000 of 1,000,000 devices (5,000,000 memberships) vs the same change by hand in `psql`",
                  "registry-pg-import": "registry on PostgreSQL: `import` of 1,000,000 devices and 5,000,000 memberships (JSON Lines) vs `psql \\copy` of the same rows as CSV",
                  "registry-fm": "Family Medical's table (seed 002): `revoke` of 100,000 of 1,000,000 devices (`--devices-file`) vs hand-written SQL in `sqlite3`",
                  "registry-fm-since": "Family Medical's table: `revoke --not-seen-since` (100,000 of 1,000,000 devices) vs hand-written SQL in `sqlite3`",
                  "registry-fm-pg": "Family Medical's table on PostgreSQL (UUIDs): `revoke` of 100,000 of 1,000,000 devices (`--devices-file`) vs the same change by hand in `psql`",
                  "registry-fm-pg-since": "Family Medical's table on PostgreSQL: `revoke --not-seen-since` (100,000 of 1,000,000 devices) vs the same change by hand in `psql`"}
        goal = GOALS[name][1]
        # A revoke's peer is the same change by hand: the floor of the job (issue 29).
        floor = above_floor(entry["ratio"]) if name.startswith("registry") and "import" not in name else ""
        add(name, labels[name], (f"{ours['median_s'] * 1000:.1f} ms ({rss(ours)}) vs {peer['median_s'] * 1000:.1f} ms ({rss(peer)}): "
            f"**{entry['ratio']:.2f}×**" if ours["median_s"] < 1 else
            f"{ours['median_s']:.2f} s ({rss(ours)}) vs {peer['median_s']:.2f} s ({rss(peer)}): **{entry['ratio']:.2f}×**") + floor,
            f"≤ {goal}×", entry["ratio"] <= goal)

results_json.parent.mkdir(parents=True, exist_ok=True)
results_json.write_text(json.dumps(record, indent=2) + "\n")
table = ["| benchmark | figure (median; peak memory) | goal | |", "|---|---|---|---|"]
table += [f"| {what} | {figure} | {goal} | {status} |" for what, figure, goal, status in rows]
block = "\n".join([f"Last run: {record['machine']}. `scripts/bench` (release build, hyperfine medians, "
                   "each pair timed in the same run; peak memory by /usr/bin/time)."
                   + (" Rows marked ‡ were not measured in this run (`ONLY=…`, `SKIP_REGISTRY`, `SKIP_POSTGRES`, `SKIP_S3`): their figures are from the run dated." if carried else ""),
                   "", *table])
print(block)
text = document.read_text()
marked = re.compile(r"(<!-- bench:begin -->\n).*?(\n<!-- bench:end -->)", re.S)
if marked.search(text):
    document.write_text(marked.sub(lambda m: m.group(1) + block + m.group(2), text))
else:
    print("the document has no <!-- bench:begin --> marker; the table was not written there", file=sys.stderr)
