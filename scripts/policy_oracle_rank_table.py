#!/usr/bin/env python3
"""pitstop's real-to-oracle gap split by the rank statistic (issue 21 Show 3).

    scripts/policy_oracle_rank_table.py [--seeds 1,2,3] [--families F,...] SERVE_DIR POINT_DIR ORACLE_DIR

The oracle forecast has no distribution, so pitstop with --predictor oracle
ranks by the point (the exact lengths) whatever --pitstop-rank says, while on
serve its default ranks by the expectation over the length model's
distribution. So the gap between serve and oracle mixes two things: the
predictions' error, and the statistic. POINT_DIR holds pitstop's serve runs
with --pitstop-rank point (FAMILY-sSEED.json, same rates): serve-point
against oracle is the predictions' error alone (same statistic), serve-point
against serve-expected is what the statistic buys on serve.

Per family and rate, means over the seeds found in all three directories:
pitstop's e2e mean / p99 (s) and completed calls/s on serve (expected),
serve (point) and the oracle; where the gap shows: pitstop's TTFT mean (the
wait for the first token: the order of waiting calls) and TPOT mean (time per
output token once started) on serve (expected) and on the oracle; and
lamps's mean on serve and on the oracle.
"""
import json
import os
import sys
from collections import defaultdict

from policy_oracle_table import FAMILIES, avg, parse_args


def runs(path):
    with open(path) as f:
        return {(r["rate"], r["policy"]): r for r in json.load(f)["runs"]}


def main():
    seeds, fams, args = parse_args(sys.argv, 3, __doc__)
    sdir, pdir, odir = args
    print("| family | seeds | rate | pitstop mean / p99, s: serve expected | serve point | oracle | "
          "pitstop calls/s: expected / point / oracle | pitstop TTFT mean, s: serve / oracle | "
          "pitstop TPOT mean, ms: serve / oracle | lamps mean, s: serve / oracle |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for fam in fams:
        cols, used = defaultdict(list), []
        for s in seeds:
            paths = [os.path.join(d, f"{fam}-s{s}{suf}.json") for d, suf in ((sdir, ""), (pdir, ""), (odir, "-oracle"))]
            if not all(os.path.exists(p) for p in paths):
                continue
            used.append(s)
            for name, p in zip(("exp", "point", "oracle"), paths):
                for k, r in runs(p).items():
                    cols[(name,) + k].append(r)
        if not used:
            continue
        for rate in sorted({k[1] for k in cols if k[0] == "exp"}):
            cells = []
            for name in ("exp", "point", "oracle"):
                rs = cols.get((name, rate, "pitstop"))
                cells.append(f"{avg(rs, 'e2e_mean_s'):.1f} / {avg(rs, 'e2e_p99_s'):.0f}" if rs else "-")
            thr = [cols.get((n, rate, "pitstop")) for n in ("exp", "point", "oracle")]
            thr = " / ".join(f"{avg(rs, 'throughput_rps'):.3f}" if rs else "-" for rs in thr)
            ps, po = cols[("exp", rate, "pitstop")], cols.get(("oracle", rate, "pitstop"))
            ttft = f"{avg(ps, 'ttft_mean_s'):.1f} / {avg(po, 'ttft_mean_s'):.1f}" if po else "-"
            tpot = f"{avg(ps, 'tpot_mean_s') * 1e3:.0f} / {avg(po, 'tpot_mean_s') * 1e3:.0f}" if po else "-"
            ls, lo = cols.get(("exp", rate, "lamps")), cols.get(("oracle", rate, "lamps"))
            lamps = f"{avg(ls, 'e2e_mean_s'):.1f} / {avg(lo, 'e2e_mean_s'):.1f}" if ls and lo else "-"
            print(f"| {fam} | {','.join(used)} | {rate:g} | {' | '.join(cells)} | {thr} | {ttft} | {tpot} | {lamps} |")


if __name__ == "__main__":
    main()
