#!/usr/bin/env python3
"""Summarise `pitstop bench --sustained --replicas N` JSON reports (docs/results-cluster.md):
per series (policy/balancer) the sustained rate, mean over seeds (min-max), the ratio to the
series named by --vs, and means over seeds at each seed's sustained rate of: prefix-hit rate,
recompute tokens per completed call, TTFT mean (queueing + prefill), e2e mean/p99, swap out.
Usage: cluster_sustained_summary.py [--vs autellix] report.json..."""
import json, sys

args = sys.argv[1:]
vs = None
if args and args[0] == "--vs":
    vs, args = args[1], args[2:]
for path in args:
    rep = json.load(open(path))
    print(f"{rep['workload']} on {rep['profile']} ({rep.get('replicas', 1)} replicas); window {rep['window_s']:g} s, "
          f"warm-up {rep['warmup_s']:g} s, drain {rep['drain_s']:g} s, done >= {rep['min_throughput']:g} of due; resolution {rep['resolution']:g}")
    base = {}
    for p in rep["policies"]:
        base[p["policy"].split("/")[-1]] = p["sustained_rate"]
    print(f"{'series':22s} {'sustained':>9s} {'per seed':>18s} {'x'+(vs or ''):>10s} {'hit%':>6s} {'recomp/call':>11s} "
          f"{'ttft_s':>7s} {'e2e_mean':>8s} {'e2e_p99':>8s} {'swapGB':>7s} {'trials':>6s}")
    for p in rep["policies"]:
        at = []
        trials = 0
        for sd in p["seeds"]:
            trials += len(sd["trials"])
            for t in sd["trials"]:
                if t["sustained"] and t["rate"] == sd["sustained_rate"]:
                    at.append(t["run"])
        mean = lambda f: sum(f(r) for r in at) / len(at) if at else float("nan")
        ratio = p["sustained_rate"] / base[vs] if vs and base.get(vs) else float("nan")
        per = "/".join(f"{sd['sustained_rate']:g}" for sd in p["seeds"])
        print(f"{p['policy']:22s} {p['sustained_rate']:9.3f} {per:>18s} {ratio:10.2f} "
              f"{mean(lambda r: 100 * r.get('prefix_hit_rate', 0)):6.1f} "
              f"{mean(lambda r: r['recompute_tokens'] / max(r['completed'], 1)):11.0f} "
              f"{mean(lambda r: r['ttft_mean_s']):7.2f} {mean(lambda r: r['e2e_mean_s']):8.1f} "
              f"{mean(lambda r: r['e2e_p99_s']):8.1f} {mean(lambda r: r['swap_out_bytes'] / 1e9):7.0f} {trials:6d}")
