#!/usr/bin/env python3
"""Sustained rate per series from bench JSON reports (docs/results-cluster.md rule):
target T = FACTOR x the best program token latency at the lightest rate; a rate passes when
program token latency <= T and >= 99% of arrived calls completed by the stop; the sustained
rate is the highest passing rate before the first failing one, interpolated linearly in
latency toward the next rate when that one fails on latency only."""
import json, sys
factor = float(sys.argv[1]); files = sys.argv[2:]
runs = [r for f in files for r in json.load(open(f))["runs"]]
key = lambda r: r["policy"] + "/" + r.get("balancer", "") + "/" + str(r.get("replicas", 1))
rates = sorted({r["rate"] for r in runs})
lightest = [r for r in runs if r["rate"] == rates[0]]
T = factor * min(r["program_token_latency_s"] for r in lightest)
series = {}
for r in runs:
    series.setdefault(key(r), []).append(r)
print(f"target program token latency {T:.4f} s/token ({factor}x best at rate {rates[0]})")
for k, rs in series.items():
    rs.sort(key=lambda r: r["rate"])
    best, prev = 0.0, None
    for r in rs:
        lat, done = r["program_token_latency_s"], r["completed"] / max(r["requests"], 1)
        if lat <= T and done >= 0.99:
            best, prev = r["rate"], r
            continue
        if prev is not None and done >= 0.99 and lat > prev["program_token_latency_s"]:
            best = prev["rate"] + (r["rate"] - prev["rate"]) * (T - prev["program_token_latency_s"]) / (lat - prev["program_token_latency_s"])
        break
    cells = " ".join(f'{r["rate"]:g}:{r["program_token_latency_s"]:.3f}/{100*r["completed"]/max(r["requests"],1):.1f}%/hit{100*r.get("prefix_hit_rate",0):.0f}%' for r in rs)
    print(f"{k:28s} sustained {best:6.2f}   {cells}")
