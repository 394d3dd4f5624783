#!/usr/bin/env python3
"""Which of pitstop's uses of predictions the real predictor costs (issue 21 Show 3).

    scripts/policy_oracle_ablation.py ABL_DIR ORACLE_DIR SERVE_DIR[,SERVE_DIR...] [SEED...]

Per family at its top rate, pitstop as is (its serve run from the first
SERVE_DIR that has FAMILY-sSEED.json, its oracle run from
ORACLE_DIR/FAMILY-sSEED-oracle.json) and with each ablation found in ABL_DIR
(FAMILY-ABLATION-serve-sSEED.json and FAMILY-ABLATION-oracle-sSEED.json, one
pitstop run each): mean and p99 e2e and recomputed tokens with serve and with
the oracle, means over the seeds that have all of them (default 1), and the
gap (serve mean / oracle mean).
"""
import json
import os
import sys

FAMILIES = ["infercept-multi", "infercept-single", "infercept-multi-vicuna", "infercept-single-vicuna", "coding"]
ABLATIONS = ["no-mot", "no-dynamic"]


def pitstop_top(path):
    runs = [r for r in json.load(open(path))["runs"] if r["policy"] == "pitstop"]
    top = max(r["rate"] for r in runs)
    return next(r for r in runs if r["rate"] == top)


def first(dirs, name):
    for d in dirs:
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    abl, odir, sdirs, seeds = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4:] or ["1"]
    print(f"seeds {' '.join(seeds)}")
    print("| family @ rate | pitstop | mean, s: serve / oracle | gap | p99, s: serve / oracle | recompute, M tokens: serve / oracle |")
    print("|---|---|---:|---:|---:|---:|")
    for fam in FAMILIES:
        variants = [("as is", lambda s: first(sdirs, f"{fam}-s{s}.json"), lambda s: os.path.join(odir, f"{fam}-s{s}-oracle.json"))]
        for a in ABLATIONS:
            variants.append((f"`--pitstop-{a}`", lambda s, a=a: os.path.join(abl, f"{fam}-{a}-serve-s{s}.json"),
                             lambda s, a=a: os.path.join(abl, f"{fam}-{a}-oracle-s{s}.json")))
        used = [s for s in seeds if all(p(s) and os.path.exists(p(s)) for _, sp, op in variants for p in (sp, op))]
        if not used:
            continue
        for i, (label, sp, op) in enumerate(variants):
            sv = [pitstop_top(sp(s)) for s in used]
            ov = [pitstop_top(op(s)) for s in used]
            m = lambda rs, k: sum(r[k] for r in rs) / len(rs)
            head = f"{fam} @{sv[0]['rate']:g}" if i == 0 else ""
            print(f"| {head} | {label} | {m(sv, 'e2e_mean_s'):.1f} / {m(ov, 'e2e_mean_s'):.1f} | "
                  f"{m(sv, 'e2e_mean_s') / m(ov, 'e2e_mean_s'):.2f} | {m(sv, 'e2e_p99_s'):.0f} / {m(ov, 'e2e_p99_s'):.0f} | "
                  f"{m(sv, 'recompute_tokens') / 1e6:.2f} / {m(ov, 'recompute_tokens') / 1e6:.2f} |")


if __name__ == "__main__":
    main()
