#!/usr/bin/env python3
"""Issue 12/21 verdict rows: pitstop against the best other policy per bar.

    scripts/policy_verdict.py BASE FAMILY SEED... [--variant DIR LABEL]

BASE holds scripts/policy_rates.sh's FAMILY-sN.json (every policy); with
--variant, DIR holds the same files from a pitstop variant (for example
`bench --policies pitstop --pitstop-fcfs-tail`), printed as LABEL beside the
default pitstop. Per rate and pitstop row: mean / p99 / calls/s averaged over
the seeds; the best other mean, lowest other p99 and highest other
throughput (non-pitstop policies); the bars (mean lowest, ties within 0.1 %;
p99 within 1.1x; throughput within 0.98x) and recompute against infercept's.
"""
import json
import sys
from collections import defaultdict


def main():
    args = sys.argv[1:]
    variant = None
    if "--variant" in args:
        i = args.index("--variant")
        variant = (args[i + 1], args[i + 2])
        args = args[:i] + args[i + 3:]
    base, fam, seeds = args[0], args[1], args[2:] or ["1"]
    rows = defaultdict(list)
    for s in seeds:
        for r in json.load(open(f"{base}/{fam}-s{s}.json"))["runs"]:
            rows[(r["rate"], r["policy"])].append(r)
        if variant:
            for r in json.load(open(f"{variant[0]}/{fam}-s{s}.json"))["runs"]:
                if r["policy"] == "pitstop":
                    rows[(r["rate"], variant[1])].append(r)
    avg = lambda rs, k: sum(r[k] for r in rs) / len(rs)
    mine = ["pitstop"] + ([variant[1]] if variant else [])
    print("| family @ rate | policy | mean / p99, s / calls/s | best other mean | lowest other p99 | highest other calls/s | "
          "mean lowest / p99 within 1.1x / thr within 0.98x | recompute vs infercept, M tokens |")
    print("|---|---|---:|---|---|---|---|---|")
    for rate in sorted({k[0] for k in rows}):
        R = {p: rs for (r, p), rs in rows.items() if r == rate}
        others = [p for p in R if p not in mine]
        bm = min(others, key=lambda p: avg(R[p], "e2e_mean_s"))
        lp = min(others, key=lambda p: avg(R[p], "e2e_p99_s"))
        ht = max(others, key=lambda p: avg(R[p], "throughput_rps"))
        bmv, lpv, htv = avg(R[bm], "e2e_mean_s"), avg(R[lp], "e2e_p99_s"), avg(R[ht], "throughput_rps")
        irc = avg(R["infercept"], "recompute_tokens")
        ok = lambda c: "yes" if c else "**no**"
        for p in mine:
            m, q, t, rc = (avg(R[p], k) for k in ("e2e_mean_s", "e2e_p99_s", "throughput_rps", "recompute_tokens"))
            print(f"| {fam} @{rate:g} | {p} | {m:.1f} / {q:.0f} / {t:.3f} | {bm} {bmv:.1f} | {lp} {lpv:.0f} | {ht} {htv:.3f} | "
                  f"{ok(m <= bmv * 1.001)} ({bmv / m:.2f}x) / {ok(q <= 1.1 * lpv)} ({q / lpv:.2f}x) / "
                  f"{ok(t >= 0.98 * htv)} ({t / htv:.3f}x) | {ok(rc <= irc)} ({rc / 1e6:.2f} vs {irc / 1e6:.2f}) |")


if __name__ == "__main__":
    main()
