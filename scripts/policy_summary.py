#!/usr/bin/env python3
"""Summarises the policy experiments (scripts/policy_experiments.sh) into the
markdown tables of docs/results-policies.md: per workload and rate, the
headline metric of every policy, pitstop's rank among the non-oracle policies,
its ratio to srpt, the p99s, and the highest rate each policy sustains under a
latency target (linear interpolation between measured rates).

Usage: scripts/policy_summary.py DIR...          (each DIR holds report.json)
       LAMPS=1 scripts/policy_summary.py DIR...  (Show 1: fcfs, infercept, lamps)
       ERRORS=1 scripts/policy_summary.py docs/img/policies/error-*   (Show 5)
       ABLATION=1 scripts/policy_summary.py DIR BASELINE_POLICY        (Show 6)
       VERDICT=1 scripts/policy_summary.py DIR...                      (Show 3)
"""
import json, os, sys

ORACLE = {"srpt"}
# Headline metric: programs of several calls are judged by Autellix's program
# token latency; single-call programs by mean end-to-end latency.
PROGRAM_WORKLOADS = {"chat", "react", "mcts", "mixed"}


def fmt(x):
    if x is None:
        return "–"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def stopped(x):
    """A run cut short by bench --stop-after: collapsed, its latencies are lower bounds."""
    return x.get("stopped_at_s", 0) > 0


def rank_key(x, key):
    """Ranks a stopped run after every run that finished."""
    return (1 if stopped(x) else 0, x[key])


def show(x, key):
    return f"≥{fmt(x[key])}*" if stopped(x) else fmt(x[key])


def sustained(rates, vals, target):
    """Highest rate with value <= target, interpolating linearly between the
    last rate under the target and the first above it."""
    best = None
    for i, (r, v) in enumerate(zip(rates, vals)):
        if v <= target:
            best = r
            continue
        if i > 0 and vals[i - 1] <= target:
            r0, v0 = rates[i - 1], vals[i - 1]
            best = r0 + (target - v0) / (v - v0) * (r - r0)
        break
    return best


def main(dirs):
    for d in dirs:
        rep = json.load(open(os.path.join(d, "report.json")))
        w = rep["workload"]
        prog = w in PROGRAM_WORKLOADS
        key = "program_token_latency_s" if prog else "e2e_mean_s"
        p99 = "program_token_latency_p99_s" if prog else "e2e_p99_s"
        unit = "program token latency, s/token" if prog else "mean end-to-end latency, s"
        runs = rep["runs"]
        pols = list(dict.fromkeys(r["policy"] for r in runs))
        rates = sorted(set(r["rate"] for r in runs))
        by = {(r["policy"], r["rate"]): r for r in runs}
        print(f"### {os.path.basename(d)}: {w} on {rep['profile']} — {unit}\n")
        print("| policy | " + " | ".join(f"rate {fmt(r)}" for r in rates) + " |")
        print("|---|" + "---|" * len(rates))
        for p in pols:
            cells = []
            for r in rates:
                x = by.get((p, r))
                cells.append("–" if x is None else f"{show(x, key)} ({show(x, p99)})")
            name = f"**{p}**" if p == "pitstop" else p
            print(f"| {name} | " + " | ".join(cells) + " |")
        print(f"\nCells: mean (p99); ≥x* = stopped (bench --stop-after), a lower bound, not sustained. ", end="")
        # pitstop's standing per rate
        lines = []
        for r in rates:
            vals = {p: by[(p, r)][key] for p in pols if (p, r) in by}
            non = {p: v for p, v in vals.items() if p not in ORACLE}
            if "pitstop" not in non:
                continue
            order = sorted(non, key=lambda p: rank_key(by[(p, r)], key))
            rank = order.index("pitstop") + 1
            bo = next(p for p in order if p != "pitstop")
            best_other = (non[bo], bo)
            srpt = vals.get("srpt")
            ratio = non["pitstop"] / srpt if srpt else None
            e2e = {p: by[(p, r)]["e2e_mean_s"] for p in non}
            e2e_rank = sorted(e2e, key=e2e.get).index("pitstop") + 1
            lines.append(f"rate {fmt(r)}: pitstop rank {rank}/{len(non)} "
                         f"(best other {best_other[1]} {fmt(best_other[0])}, pitstop/that {non['pitstop']/best_other[0]:.2f}x); "
                         f"pitstop/srpt {ratio:.2f}x; by mean e2e rank {e2e_rank}" if ratio else "")
        print("Pitstop per rate: " + "; ".join(l for l in lines if l) + ".\n")
        # sustained rate under a target: 3x the lowest value at the lowest rate
        lo = min(by[(p, rates[0])][key] for p in pols if (p, rates[0]) in by)
        target = 3 * lo
        sus = []
        for p in pols:
            vals = [float("inf") if stopped(by[(p, r)]) else by[(p, r)][key] for r in rates if (p, r) in by]
            s = sustained(rates, vals, target)
            sus.append(f"{p} {fmt(s) if s is not None else '< ' + fmt(rates[0])}")
        print(f"Highest rate sustained with {unit.split(',')[0]} ≤ {fmt(target)} (3× the best at rate {fmt(rates[0])}): " + ", ".join(sus) + ".\n")


if __name__ == "__main__" and not (os.environ.get("LAMPS") or os.environ.get("ERRORS") or os.environ.get("ABLATION") or os.environ.get("VERDICT")):
    main(sys.argv[1:])


def lamps_table(d):
    """Show 1: fcfs, infercept and lamps per rate: mean/p99 e2e, mean TTFT,
    KV use, and lamps's reduction against infercept."""
    rep = json.load(open(os.path.join(d, "report.json")))
    by = {(r["policy"], r["rate"]): r for r in rep["runs"]}
    rates = sorted(set(r["rate"] for r in rep["runs"]))
    print(f"### {rep['workload']} on {rep['profile']}\n")
    print("| rate | fcfs e2e mean / p99 / TTFT | infercept e2e mean / p99 / TTFT | lamps e2e mean / p99 / TTFT | KV use fcfs / infercept / lamps | lamps vs infercept: e2e, TTFT | swap GB out (infercept / lamps) |")
    print("|---|---|---|---|---|---|---|")
    for r in rates:
        f, i, l = by[("fcfs", r)], by[("infercept", r)], by[("lamps", r)]
        cell = lambda x: f"{fmt(x['e2e_mean_s'])} / {fmt(x['e2e_p99_s'])} / {fmt(x['ttft_mean_s'])}"
        red = lambda a, b: f"{(1 - a / b) * 100:+.0f}%" if b > 0 else "–"
        print(f"| {fmt(r)} | {cell(f)} | {cell(i)} | {cell(l)} | "
              f"{f['kv_util_mean']*100:.0f}% / {i['kv_util_mean']*100:.0f}% / {l['kv_util_mean']*100:.0f}% | "
              f"{red(l['e2e_mean_s'], i['e2e_mean_s'])}, {red(l['ttft_mean_s'], i['ttft_mean_s'])} | "
              f"{i['swap_out_bytes']/1e9:.0f} / {l['swap_out_bytes']/1e9:.0f} |")
    print("\n(lamps vs infercept: positive = lamps lower.)\n")


if __name__ == "__main__" and os.environ.get("LAMPS"):
    for d in sys.argv[1:]:
        lamps_table(d)


def error_table(dirs):
    """Show 5: lamps and pitstop against injected prediction error."""
    rows = []
    for d in dirs:
        rep = json.load(open(os.path.join(d, "report.json")))
        p = float(os.path.basename(d.rstrip("/")).split("-", 1)[1])
        rows.append((p, {(r["policy"], r["rate"]): r for r in rep["runs"]}))
    rows.sort()
    rates = sorted({k[1] for _, by in rows for k in by})
    print("| error p | " + " | ".join(f"lamps @{fmt(r)}: e2e mean / TTFT | pitstop @{fmt(r)}: e2e mean / TTFT" for r in rates) + " |")
    print("|---|" + "---|---|" * len(rates))
    base = rows[0][1]
    for p, by in rows:
        cells = []
        for r in rates:
            for pol in ("lamps", "pitstop"):
                x, b = by[(pol, r)], base[(pol, r)]
                cells.append(f"{fmt(x['e2e_mean_s'])} ({(x['e2e_mean_s']/b['e2e_mean_s']-1)*100:+.0f}%) / {fmt(x['ttft_mean_s'])}")
        print(f"| {p*100:.0f}% | " + " | ".join(cells) + " |")
    print()


def ablation_table(d, baseline):
    """Show 6: each part's share of pitstop's gain over the baseline."""
    rep = json.load(open(os.path.join(d, "report.json")))
    prog = rep["workload"] in PROGRAM_WORKLOADS
    key = "program_token_latency_s" if prog else "e2e_mean_s"
    by = {(r["policy"], r["rate"]): r for r in rep["runs"]}
    rates = sorted({r["rate"] for r in rep["runs"]})
    parts = [("pitstop-noqueues", "program queues"), ("pitstop-nomot", "memory-over-time"), ("pitstop-nodyn", "dynamic handling")]
    print(f"{rep['workload']} on {rep['profile']} ({'program token latency' if prog else 'mean e2e latency'}; share = (ablated − pitstop) / ({baseline} − pitstop)):\n")
    print("| rate | " + baseline + " | pitstop | " + " | ".join(f"without {n}" for _, n in parts) + " |")
    print("|---|---|---|" + "---|" * len(parts))
    for r in rates:
        b, p = by[(baseline, r)][key], by[("pitstop", r)][key]
        cells = []
        for pol, _ in parts:
            a = by[(pol, r)][key]
            cells.append(f"{fmt(a)} ({(a - p) / (b - p) * 100:+.0f}%)" if b != p else fmt(a))
        print(f"| {fmt(r)} | {fmt(b)} | {fmt(p)} | " + " | ".join(cells) + " |")
    print()


if __name__ == "__main__" and os.environ.get("ERRORS"):
    error_table(sys.argv[1:])
if __name__ == "__main__" and os.environ.get("ABLATION"):
    ablation_table(sys.argv[1], sys.argv[2])


def verdict(dirs):
    """Show 3: pitstop at the two highest rates of each workload."""
    print("| experiment | rate | pitstop | best other non-oracle | pitstop / best other | pitstop rank | pitstop / srpt | p99: pitstop vs best other | rank by mean e2e |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in dirs:
        rep = json.load(open(os.path.join(d, "report.json")))
        prog = rep["workload"] in PROGRAM_WORKLOADS
        key = "program_token_latency_s" if prog else "e2e_mean_s"
        p99 = "program_token_latency_p99_s" if prog else "e2e_p99_s"
        by = {(r["policy"], r["rate"]): r for r in rep["runs"]}
        pols = list(dict.fromkeys(r["policy"] for r in rep["runs"]))
        rates = sorted({r["rate"] for r in rep["runs"]})[-2:]
        for r in rates:
            non = {p: by[(p, r)] for p in pols if p not in ORACLE and (p, r) in by}
            order = sorted(non, key=lambda p: rank_key(non[p], key))
            other = next(p for p in order if p != "pitstop")
            ps, ot = non["pitstop"], non[other]
            e2e_rank = sorted(non, key=lambda p: rank_key(non[p], "e2e_mean_s")).index("pitstop") + 1
            srpt = by.get(("srpt", r))
            vs_srpt = f"{ps[key]/srpt[key]:.2f}" + (" (srpt stopped)" if stopped(srpt) else "") if srpt else "–"
            print(f"| {os.path.basename(d.rstrip('/'))} | {fmt(r)} | {show(ps, key)} | {other} {show(ot, key)} | "
                  f"{ps[key]/ot[key]:.3f} | {order.index('pitstop')+1}/{len(non)} | "
                  f"{vs_srpt} | {show(ps, p99)} vs {show(ot, p99)} | {e2e_rank} |")
    print()


if __name__ == "__main__" and os.environ.get("VERDICT"):
    verdict(sys.argv[1:])
