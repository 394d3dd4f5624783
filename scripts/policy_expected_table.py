#!/usr/bin/env python3
"""Session 8's table: pitstop ranking by the expected memory-over-time
(--pitstop-rank expected), by the point forecast (point) and with the oracle,
per point, beside the best baseline of the session 7 screening.

usage: scripts/policy_expected_table.py RUNS BASELINES
RUNS holds TAG-{expected,nocond,mean,median,point,oracle}.json (bin/pitstop bench
--policies pitstop; nocond: the expected rank without the conditioning, a
scratch build; perbin: every bin scored on its own, binsPerGroup 1, a scratch build), and TAG-VARIANT-sSEED.json for seeds 2 and 3 at some points; BASELINES holds TAG.json with the baselines (infercept, lamps,
vllm-opt) at the same point: docs/img/policies-session7/screen/baselines.
"""
import json
import os
import sys

TAGS = ["im4", "im52", "coding036", "mixed07", "azconv6", "isv18"]
VARIANTS = ["expected", "perbin", "nocond", "mean", "median", "point", "oracle"]


def run_of(path):
    with open(path) as f:
        runs = json.load(f)["runs"]
    return runs[0]


def main():
    runs_dir, base_dir = sys.argv[1], sys.argv[2]
    print("| point | pitstop | mean s | p99 s | calls/s | recompute M | mean / best other | p99 / lowest other | mean / oracle's |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for tag in TAGS:
        with open(os.path.join(base_dir, tag + ".json")) as f:
            base = json.load(f)["runs"]
        best_mean = min(r["e2e_mean_s"] for r in base)
        best_p99 = min(r["e2e_p99_s"] for r in base)
        got = {}
        for v in VARIANTS:
            p = os.path.join(runs_dir, f"{tag}-{v}.json")
            if os.path.exists(p):
                got[v] = run_of(p)
        for v in VARIANTS:
            if v not in got:
                continue
            r = got[v]
            gap = r["e2e_mean_s"] / got["oracle"]["e2e_mean_s"] if "oracle" in got else float("nan")
            print(f"| {tag} | {v} | {r['e2e_mean_s']:.2f} | {r['e2e_p99_s']:.1f} | {r['throughput_rps']:.3f} | "
                  f"{r['recompute_tokens'] / 1e6:.2f} | {r['e2e_mean_s'] / best_mean:.3f} | "
                  f"{r['e2e_p99_s'] / best_p99:.2f} | {gap:.3f} |")
        best = min(base, key=lambda r: r["e2e_mean_s"])
        print(f"| {tag} | best other: {best['policy']} | {best['e2e_mean_s']:.2f} | {best['e2e_p99_s']:.1f} | "
              f"{max(r['throughput_rps'] for r in base):.3f} (highest) | "
              f"{next(r['recompute_tokens'] for r in base if r['policy'] == 'infercept') / 1e6:.2f} (infercept) | | | |")


def join(rs, field, fmt, scale=1):
    return " / ".join(fmt.format(r[field] / scale) for r in rs)


def seeds(runs_dir, base_dir):
    """Means over seeds 1-3 where seeds 2 and 3 were run."""
    print()
    print("| point | pitstop | mean s, seeds 1/2/3 | mean of seeds | p99 s, seeds 1/2/3 | recompute M, seeds 1/2/3 | mean / oracle's (of the seed means) |")
    print("|---|---|---|---:|---|---|---:|")
    for tag in TAGS:
        if not os.path.exists(os.path.join(runs_dir, f"{tag}-oracle-s2.json")):
            continue
        got = {}
        for v in VARIANTS:
            paths = [os.path.join(runs_dir, f"{tag}-{v}.json")] + [os.path.join(runs_dir, f"{tag}-{v}-s{s}.json") for s in (2, 3)]
            if all(os.path.exists(x) for x in paths):
                got[v] = [run_of(x) for x in paths]
        avg = {v: sum(r["e2e_mean_s"] for r in rs) / len(rs) for v, rs in got.items()}
        for v, rs in got.items():
            print(f"| {tag} | {v} | {join(rs, 'e2e_mean_s', '{:.2f}')} | {avg[v]:.2f} | "
                  f"{join(rs, 'e2e_p99_s', '{:.0f}')} | "
                  f"{join(rs, 'recompute_tokens', '{:.2f}', 1e6)} | {avg[v] / avg['oracle']:.3f} |")
        if tag == "im52":
            base = [os.path.join(base_dir, "im52.json")] + [os.path.join(base_dir, "..", "..", "seeds", f"im52-s{s}.json") for s in (2, 3)]
            for pol in ("infercept", "lamps"):
                rs = []
                for b in base:
                    with open(b) as f:
                        rs.append(next(r for r in json.load(f)["runs"] if r["policy"] == pol))
                m = sum(r["e2e_mean_s"] for r in rs) / 3
                print(f"| {tag} | {pol} (session 7) | {join(rs, 'e2e_mean_s', '{:.2f}')} | {m:.2f} | "
                      f"{join(rs, 'e2e_p99_s', '{:.0f}')} | "
                      f"{join(rs, 'recompute_tokens', '{:.2f}', 1e6)} | |")


if __name__ == "__main__":
    main()
    seeds(sys.argv[1], sys.argv[2])
