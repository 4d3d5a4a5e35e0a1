"""Merges the rounds of one interleaved pair (scripts/bench's `interleaved`) into one hyperfine
result: each command's times from every round pooled, its median and mean recomputed, in the
order of the first round (ours, then the peer), so bench_report.py reads it as any pair.

    bench_merge.py OUT.json ROUND.json...

The rounds alternate which command runs first: a machine whose speed drifts over a few seconds
(another tenant of the host) then weighs on both sides alike, where one hyperfine run times all
of the first command before any of the second."""
import json
import statistics
import sys

out, *rounds = sys.argv[1:]
merged = {}
order = []
for path in rounds:
    for result in json.load(open(path))["results"]:
        name = result["command"]
        if name not in merged:
            merged[name] = {"command": name, "times": []}
            order.append(name)
        merged[name]["times"] += result["times"]
first = [result["command"] for result in json.load(open(rounds[0]))["results"]]
results = []
for name in first:
    times = merged[name]["times"]
    results.append({"command": name, "times": times, "median": statistics.median(times), "mean": statistics.fmean(times),
                    "stddev": statistics.pstdev(times), "min": min(times), "max": max(times)})
json.dump({"results": results}, open(out, "w"), indent=2)
