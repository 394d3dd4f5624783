#!/usr/bin/env python3
"""Pitstop against pitstop: one option's grid beside the default's, per point.

    scripts/policy_rates_compare.py BASEDIR NEWDIR SEED FAMILY...

For each FAMILY and rate, reads pitstop's run in BASEDIR/FAMILY-sSEED.json
and NEWDIR/FAMILY-sSEED.json (scripts/policy_rates.sh's reports) and prints
the new run's call e2e mean, p99, completed calls per second and tokens
recomputed against the base's, "identical" where every one of them (and the
program token latency) is equal. Bad arguments or a missing report: one line
on stderr, exit 2.
"""
import json
import os
import sys

KEYS = ("e2e_mean_s", "e2e_p99_s", "throughput_rps", "recompute_tokens", "program_token_latency_s")


def pitstop(path):
    runs = json.load(open(path))["runs"]
    return {r["rate"]: r for r in runs if r["policy"] == "pitstop"}


def pct(new, old):
    return f"{100 * (new / old - 1):+.2f} %" if old else ("+0.00 %" if new == old else "new")


def main(argv):
    if len(argv) < 4:
        print("usage: policy_rates_compare.py BASEDIR NEWDIR SEED FAMILY...", file=sys.stderr)
        sys.exit(2)
    base, new, seed = argv[:3]
    print("| family | rate | e2e mean, s | p99, s | calls/s | recompute, M tokens | |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for fam in argv[3:]:
        name = f"{fam}-s{seed}.json"
        try:
            b, n = pitstop(os.path.join(base, name)), pitstop(os.path.join(new, name))
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"policy_rates_compare.py: {name}: {e}", file=sys.stderr)
            sys.exit(2)
        for rate in sorted(n):
            if rate not in b:
                print(f"policy_rates_compare.py: {name}: rate {rate} not in {base}", file=sys.stderr)
                sys.exit(2)
            o, x = b[rate], n[rate]
            same = all(o[k] == x[k] for k in KEYS)
            cells = [f"{x[k]:.3f} ({pct(x[k], o[k])})" for k in KEYS[:3]]
            cells.append(f"{x['recompute_tokens'] / 1e6:.2f} ({pct(x['recompute_tokens'], o['recompute_tokens'])})")
            print(f"| {fam} | {rate:g} | " + " | ".join(cells) + f" | {'identical' if same else ''} |")


if __name__ == "__main__":
    main(sys.argv[1:])
