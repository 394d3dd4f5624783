#!/usr/bin/env python3
"""Tables of scripts/policy_rates.sh's reports (issue 12/21 Show 1 and 3).

    scripts/policy_rates_table.py DIR FAMILY [SEED...]
    scripts/policy_rates_table.py --summary DIR FAMILY[,FAMILY...] [SEED...]

Per rate: each policy's call e2e mean / p99 (s), completed calls per second,
tokens recomputed (M) and GB swapped out, averaged over the seeds found
(default 1); the oracle rows (pitstop and lamps with --predictor oracle, the
upper bound) beside them; then whether pitstop meets the issue's bar among the
non-oracle policies (mean lowest, ties within 0.1% counted, p99 within 1.1x of the lowest, throughput
within 0.98x of the highest), and its lead over the best other mean with the
real predictor and with the oracle (when the oracle runs are there).
--summary prints only the verdict rows of every family listed, one table, and
exits with status 1 when any bar fails.
"""
import json
import os
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        return json.load(f)["runs"]


def verdicts(d, fam, seeds, out=print):
    """Prints fam's per-rate table with out and returns its verdict rows:
    (rate, row text, all bars met)."""
    real, orac = defaultdict(list), defaultdict(list)
    for s in seeds:
        for r in load(f"{d}/{fam}-s{s}.json"):
            real[(r["rate"], r["policy"])].append(r)
        if os.path.exists(f"{d}/{fam}-s{s}-oracle.json"):
            for r in load(f"{d}/{fam}-s{s}-oracle.json"):
                orac[(r["rate"], r["policy"])].append(r)
    avg = lambda rs, k: sum(r[k] for r in rs) / len(rs)
    rates = sorted({k[0] for k in real})
    pols = []
    for k in real:
        if k[1] not in pols:
            pols.append(k[1])
    out(f"| rate | policy | e2e mean / p99, s | calls/s | recompute, M tokens | swap out, GB | unfinished |")
    out("|---:|---|---:|---:|---:|---:|---|")
    rows_out = []
    for rate in rates:
        rows = {}
        for p in pols:
            rs = real[(rate, p)]
            rows[p] = rs
            stop = sum(1 for r in rs if r.get("stopped_at_s"))
            out(f"| {rate:g} | {p} | {avg(rs,'e2e_mean_s'):.1f} / {avg(rs,'e2e_p99_s'):.0f} | {avg(rs,'throughput_rps'):.3f} | "
                f"{avg(rs,'recompute_tokens')/1e6:.2f} | {avg(rs,'swap_out_bytes')/1e9:.0f} | {'stopped' if stop else ''} |")
        for p in ("pitstop", "lamps"):
            rs = orac.get((rate, p))
            if rs:
                out(f"| {rate:g} | {p} (oracle, bound) | {avg(rs,'e2e_mean_s'):.1f} / {avg(rs,'e2e_p99_s'):.0f} | {avg(rs,'throughput_rps'):.3f} | "
                    f"{avg(rs,'recompute_tokens')/1e6:.2f} | {avg(rs,'swap_out_bytes')/1e9:.0f} | |")
        ps = rows["pitstop"]
        others = [p for p in pols if p != "pitstop"]
        best_mean = min(avg(rows[p], "e2e_mean_s") for p in others)
        best_mean_p = min(others, key=lambda p: avg(rows[p], "e2e_mean_s"))
        low_p99 = min(avg(rows[p], "e2e_p99_s") for p in pols)
        high_thr = max(avg(rows[p], "throughput_rps") for p in pols)
        inf_rec = avg(rows["infercept"], "recompute_tokens")
        m, q, t, rc = avg(ps, "e2e_mean_s"), avg(ps, "e2e_p99_s"), avg(ps, "throughput_rps"), avg(ps, "recompute_tokens")
        o = orac.get((rate, "pitstop"))
        bars = (m <= best_mean * 1.001, q <= 1.1 * low_p99, t >= 0.98 * high_thr, rc <= inf_rec)
        yn = lambda b: "yes" if b else "no"
        lead = f"{best_mean/m:.2f}x / {best_mean/avg(o,'e2e_mean_s'):.2f}x" if o else f"{best_mean/m:.2f}x / -"
        rows_out.append((rate,
            f"| {rate:g} | {yn(bars[0])} ({m:.2f} vs {best_mean_p} {best_mean:.2f}) | "
            f"{yn(bars[1])} ({q/low_p99:.2f}x) | {yn(bars[2])} ({t/high_thr:.3f}x) | "
            f"{yn(bars[3])} ({rc/1e6:.2f} vs {inf_rec/1e6:.2f} M) | {lead} |", all(bars)))
    return rows_out


def main():
    args = sys.argv[1:]
    if args and args[0] == "--summary":
        d, fams, seeds = args[1], args[2].split(","), args[3:] or ["1"]
        print(f"seeds {' '.join(seeds)}")
        print("| family | rate | mean lowest | p99 within 1.1x | throughput within 0.98x | recompute <= infercept | best other mean / pitstop: real / oracle | all |")
        print("|---|---:|---|---|---|---|---|---|")
        ok = True
        for fam in fams:
            for rate, row, passed in verdicts(d, fam, seeds, out=lambda *_: None):
                print(f"| {fam} {row} {'PASS' if passed else 'FAIL'} |")
                ok = ok and passed
        sys.exit(0 if ok else 1)
    d, fam = args[0], args[1]
    seeds = args[2:] or ["1"]
    rows = verdicts(d, fam, seeds)
    print()
    print("| rate | mean lowest | p99 within 1.1x | throughput within 0.98x | recompute <= infercept | best other mean / pitstop: real / oracle |")
    print("|---:|---|---|---|---|---|")
    print("\n".join(r[1] for r in rows))


if __name__ == "__main__":
    main()
