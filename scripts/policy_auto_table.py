#!/usr/bin/env python3
"""Session 8's auto-rank table: pitstop with --pitstop-rank auto (variants in
AUTO/TAG-VARIANT[-sSEED].json) beside the point and the expectation of
session 8 (RUNS/TAG-{point,expected,oracle}[-sSEED].json) and the best
baseline of session 7's screening (BASELINES/TAG.json), with the bars of
issue 21 per run: mean lowest, p99 within 1.1x of the lowest other,
throughput at least 0.98x the highest other.

usage: scripts/policy_auto_table.py RUNS AUTO BASELINES VARIANT...
"""
import json
import os
import sys

TAGS = ["im4", "im52", "coding036", "mixed07", "azconv6", "isv18"]
FIXED = ["point", "expected", "oracle"]


def run_of(path):
    with open(path) as f:
        return json.load(f)["runs"][0]


def path_of(runs, auto, tag, v, seed):
    sfx = "" if seed == 1 else f"-s{seed}"
    d = runs if v in FIXED else auto
    return os.path.join(d, f"{tag}-{v}{sfx}.json")


def bars(r, base):
    others = [b for b in base]
    m = r["e2e_mean_s"] <= min(b["e2e_mean_s"] for b in others)
    p = r["e2e_p99_s"] <= 1.1 * min(b["e2e_p99_s"] for b in others)
    t = r["throughput_rps"] >= 0.98 * max(b["throughput_rps"] for b in others)
    return "".join(c if ok else "-" for c, ok in zip("MPT", (m, p, t)))


def main():
    runs, auto, base_dir, variants = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    print("| point | pitstop | mean s | p99 s | calls/s | recompute M | mean / best other | p99 / lowest other | bars (M P T) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for tag in TAGS:
        with open(os.path.join(base_dir, tag + ".json")) as f:
            base = json.load(f)["runs"]
        for v in ["point", "expected"] + variants + ["oracle"]:
            p = path_of(runs, auto, tag, v, 1)
            if not os.path.exists(p):
                continue
            r = run_of(p)
            print(f"| {tag} | {v} | {r['e2e_mean_s']:.2f} | {r['e2e_p99_s']:.1f} | {r['throughput_rps']:.3f} | "
                  f"{r['recompute_tokens'] / 1e6:.2f} | {r['e2e_mean_s'] / min(b['e2e_mean_s'] for b in base):.3f} | "
                  f"{r['e2e_p99_s'] / min(b['e2e_p99_s'] for b in base):.2f} | {bars(r, base) if v != 'oracle' else ''} |")
    print()
    print("| point | pitstop | mean s, seeds 1/2/3 | mean of seeds | p99 s, seeds 1/2/3 | calls/s, seeds 1/2/3 |")
    print("|---|---|---|---:|---|---|")
    for tag in TAGS:
        for v in ["point", "expected"] + variants + ["oracle"]:
            ps = [path_of(runs, auto, tag, v, s) for s in (1, 2, 3)]
            if not all(os.path.exists(p) for p in ps):
                continue
            rs = [run_of(p) for p in ps]
            j = lambda k, f: " / ".join(f.format(r[k]) for r in rs)
            print(f"| {tag} | {v} | {j('e2e_mean_s', '{:.2f}')} | {sum(r['e2e_mean_s'] for r in rs) / 3:.2f} | "
                  f"{j('e2e_p99_s', '{:.0f}')} | {j('throughput_rps', '{:.3f}')} |")


if __name__ == "__main__":
    main()
