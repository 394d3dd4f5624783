#!/usr/bin/env python3
"""Merge one policy's grid reports into a grid of every policy.

    scripts/policy_rates_merge.py BASEDIR NEWDIR OUTDIR SEED FAMILY...

For each FAMILY, reads BASEDIR/FAMILY-sSEED.json (scripts/policy_rates.sh's
report of every policy) and NEWDIR/FAMILY-sSEED.json (a run of some of them,
usually pitstop alone with another option), replaces the base's runs of the
policies NEWDIR's report holds, and writes OUTDIR/FAMILY-sSEED.json, so that
scripts/policy_rates_table.py --summary OUTDIR ... judges the new pitstop
against the same baselines. Bad arguments or a missing report: one line on
stderr, exit 2.
"""
import json
import os
import sys


def main(argv):
    if len(argv) < 5:
        print("usage: policy_rates_merge.py BASEDIR NEWDIR OUTDIR SEED FAMILY...", file=sys.stderr)
        sys.exit(2)
    base, new, out, seed = argv[:4]
    os.makedirs(out, exist_ok=True)
    for fam in argv[4:]:
        name = f"{fam}-s{seed}.json"
        try:
            b = json.load(open(os.path.join(base, name)))
            n = json.load(open(os.path.join(new, name)))
            pols = {r["policy"] for r in n["runs"]}
            b["runs"] = [r for r in b["runs"] if r["policy"] not in pols] + n["runs"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"policy_rates_merge.py: {name}: {e}", file=sys.stderr)
            sys.exit(2)
        with open(os.path.join(out, name), "w") as f:
            json.dump(b, f)


if __name__ == "__main__":
    main(sys.argv[1:])
