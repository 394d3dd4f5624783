#!/usr/bin/env python3
"""pitstop's serve-to-oracle gap split between its two predictions (issue 21 Show 3).

    scripts/policy_oracle_split_table.py [--seeds 1,2,3] SERVE_DIR ORACLE_DIR SPLIT_DIR

SERVE_DIR holds FAMILY-sSEED.json (--predictor serve), ORACLE_DIR
FAMILY-sSEED-oracle.json, SPLIT_DIR FAMILY-sSEED-serve-length.json (serve's
lengths, the true tool times) and FAMILY-sSEED-serve-tool.json (the true
lengths, serve's tool-duration statistics), each with pitstop at the same
rate. Per family found in SPLIT_DIR, at each rate of its split runs, means
over the seeds that have all four: pitstop's e2e mean / p99 (s), completed
calls/s, TTFT mean (s) and recomputed tokens (M) with each predictor.
"""
import glob
import json
import os
import re
import sys
from collections import defaultdict

PREDICTORS = ("serve", "serve-length", "serve-tool", "oracle")


def pitstop_runs(path):
    with open(path) as f:
        return {r["rate"]: r for r in json.load(f)["runs"] if r["policy"] == "pitstop"}


def main():
    args = sys.argv[1:]
    seeds = ["1", "2", "3"]
    if args[:1] == ["--seeds"]:
        seeds, args = args[1].split(","), args[2:]
    if len(args) != 3:
        sys.exit(__doc__)
    sdir, odir, xdir = args
    fams = sorted({re.sub(r"-s\d+-serve-length\.json$", "", os.path.basename(p))
                   for p in glob.glob(os.path.join(xdir, "*-serve-length.json"))})
    print("| family | seeds | rate | predictor | pitstop mean / p99, s | calls/s | TTFT mean, s | recompute, M tokens |")
    print("|---|---|---:|---|---:|---:|---:|---:|")
    for fam in fams:
        runs, used = defaultdict(list), []
        for s in seeds:
            paths = {"serve": f"{sdir}/{fam}-s{s}.json", "oracle": f"{odir}/{fam}-s{s}-oracle.json",
                     "serve-length": f"{xdir}/{fam}-s{s}-serve-length.json",
                     "serve-tool": f"{xdir}/{fam}-s{s}-serve-tool.json"}
            if not all(os.path.exists(p) for p in paths.values()):
                continue
            got = {k: pitstop_runs(p) for k, p in paths.items()}
            rates = set(got["serve-length"]) & set(got["serve-tool"]) & set(got["serve"]) & set(got["oracle"])
            if not rates:
                continue
            used.append(s)
            for k, rs in got.items():
                for rate in rates:
                    runs[(rate, k)].append(rs[rate])
        avg = lambda rs, key: sum(r[key] for r in rs) / len(rs)
        for rate in sorted({k[0] for k in runs}):
            for p in PREDICTORS:
                rs = runs[(rate, p)]
                print(f"| {fam} | {','.join(used)} | {rate:g} | {p} | {avg(rs, 'e2e_mean_s'):.1f} / {avg(rs, 'e2e_p99_s'):.0f} | "
                      f"{avg(rs, 'throughput_rps'):.3f} | {avg(rs, 'ttft_mean_s'):.1f} | {avg(rs, 'recompute_tokens') / 1e6:.2f} |")


if __name__ == "__main__":
    main()
