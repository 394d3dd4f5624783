#!/usr/bin/env python3
"""Summarise `pitstop bench --sustained --replicas N` JSON reports (docs/results-cluster.md):
per series (policy/balancer) the sustained rate, mean over seeds (min-max), the ratio to the
series named by --vs (same policy, that balancer), and means over seeds at each seed's
sustained rate of: prefix-hit rate, recompute tokens per completed call, TTFT mean (queueing +
prefill), e2e mean/p95/p99 (p95 nan in reports written before it existed), swap out, preemptions.
Reports of one workload, policy and replica count given in several files (seed 1 in one, seeds
2-3 in another) are merged series by series with --merge.
--same-rate A B (series names, e.g. plas/autellix plas/pitstop) adds, per seed, every rate both
searches tried: verdict, done/due, prefix hit, TTFT, TPOT, e2e mean/p95/p99, swap, preemptions.
Usage: cluster_sustained_summary.py [--vs autellix] [--merge] [--same-rate A B] report.json..."""
import json, sys

args = sys.argv[1:]
vs, merge, pair = None, False, None
while args and args[0].startswith("--"):
    if args[0] == "--vs":
        vs, args = args[1], args[2:]
    elif args[0] == "--merge":
        merge, args = True, args[1:]
    elif args[0] == "--same-rate":
        pair, args = (args[1], args[2]), args[3:]
    else:
        sys.exit(f"unknown option {args[0]} (valid: --vs SERIES, --merge, --same-rate A B)")

reports = [json.load(open(p)) for p in args]
if merge and reports:
    first = reports[0]
    series = {}
    for rep in reports:
        key = (rep["workload"], rep["profile"], rep.get("replicas", 1), rep["window_s"], rep["resolution"])
        if key != (first["workload"], first["profile"], first.get("replicas", 1), first["window_s"], first["resolution"]):
            sys.exit(f"--merge: reports differ in workload/profile/replicas/window/resolution: {key}")
        for p in rep["policies"]:
            series.setdefault(p["policy"], []).extend(p["seeds"])
    pols = []
    for name, seeds in series.items():
        seeds.sort(key=lambda s: s["seed"])
        rates = [s["sustained_rate"] for s in seeds]
        pols.append({"policy": name, "seeds": seeds, "sustained_rate": sum(rates) / len(rates)})
    reports = [dict(first, policies=pols)]


def at_rate(sd):
    for t in sd["trials"]:
        if t["sustained"] and t["rate"] == sd["sustained_rate"]:
            return t["run"]
    return None


for rep in reports:
    print(f"{rep['workload']} on {rep['profile']} ({rep.get('replicas', 1)} replicas); window {rep['window_s']:g} s, "
          f"warm-up {rep['warmup_s']:g} s, drain {rep['drain_s']:g} s, done >= {rep['min_throughput']:g} of due; resolution {rep['resolution']:g}")
    base = {p["policy"]: p["sustained_rate"] for p in rep["policies"]}
    print(f"{'series':22s} {'sustained':>9s} {'per seed':>22s} {'x'+(vs or ''):>10s} {'hit%':>6s} {'recomp/call':>11s} "
          f"{'ttft_s':>7s} {'e2e_mean':>8s} {'e2e_p95':>8s} {'e2e_p99':>8s} {'swapGB':>7s} {'preempt':>7s} {'trials':>6s}")
    for p in rep["policies"]:
        at = [r for r in (at_rate(sd) for sd in p["seeds"]) if r]
        trials = sum(len(sd["trials"]) for sd in p["seeds"])
        mean = lambda f: sum(f(r) for r in at) / len(at) if at else float("nan")
        ref = p["policy"].split("/")[0] + "/" + vs if vs else None
        ratio = p["sustained_rate"] / base[ref] if ref and base.get(ref) else float("nan")
        per = "/".join(f"{sd['sustained_rate']:g}" for sd in p["seeds"])
        print(f"{p['policy']:22s} {p['sustained_rate']:9.3f} {per:>22s} {ratio:10.2f} "
              f"{mean(lambda r: 100 * r.get('prefix_hit_rate', 0)):6.1f} "
              f"{mean(lambda r: r['recompute_tokens'] / max(r['completed'], 1)):11.0f} "
              f"{mean(lambda r: r['ttft_mean_s']):7.2f} {mean(lambda r: r['e2e_mean_s']):8.1f} "
              f"{mean(lambda r: r.get('e2e_p95_s', float('nan'))):8.1f} "
              f"{mean(lambda r: r['e2e_p99_s']):8.1f} {mean(lambda r: r['swap_out_bytes'] / 1e9):7.0f} "
              f"{mean(lambda r: r.get('preemptions', 0)):7.0f} {trials:6d}")
    if pair:
        by = {p["policy"]: {sd["seed"]: sd for sd in p["seeds"]} for p in rep["policies"]}
        if pair[0] not in by or pair[1] not in by:
            print(f"--same-rate: {pair[0]} or {pair[1]} not in this report")
            continue
        print(f"same rate, {pair[0]} | {pair[1]}:")
        print(f"{'seed':>4s} {'rate':>7s} {'sustained':>11s} {'done/due':>13s} {'hit%':>11s} {'ttft_s':>11s} "
              f"{'tpot_ms':>9s} {'e2e_mean':>11s} {'e2e_p95':>11s} {'e2e_p99':>11s} {'swapGB':>11s} {'preempt':>11s}")
        for seed, a in by[pair[0]].items():
            b = by[pair[1]].get(seed)
            if not b:
                continue
            ta = {t["rate"]: t for t in a["trials"]}
            tb = {t["rate"]: t for t in b["trials"]}
            for rate in sorted(set(ta) & set(tb)):
                x, y = ta[rate], tb[rate]
                two = lambda f, fmt: (format(f(x), fmt) + "|" + format(f(y), fmt))
                stop = lambda t: "S" if t["run"].get("stopped_at_s", 0) > 0 else ""
                print(f"{seed:4d} {rate:7.4g} {('y' if x['sustained'] else 'n') + stop(x) + '|' + ('y' if y['sustained'] else 'n') + stop(y):>11s} "
                      f"{two(lambda t: t['throughput_ratio'], '.3f'):>13s} "
                      f"{two(lambda t: 100 * t['run'].get('prefix_hit_rate', 0), '.1f'):>11s} "
                      f"{two(lambda t: t['run']['ttft_mean_s'], '.2f'):>11s} "
                      f"{two(lambda t: 1000 * t['run']['tpot_mean_s'], '.0f'):>9s} "
                      f"{two(lambda t: t['run']['e2e_mean_s'], '.1f'):>11s} "
                      f"{two(lambda t: t['run'].get('e2e_p95_s', float('nan')), '.0f'):>11s} "
                      f"{two(lambda t: t['run']['e2e_p99_s'], '.0f'):>11s} "
                      f"{two(lambda t: t['run']['swap_out_bytes'] / 1e9, '.0f'):>11s} "
                      f"{two(lambda t: t['run'].get('preemptions', 0), 'd'):>11s}")
