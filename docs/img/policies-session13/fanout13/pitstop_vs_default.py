#!/usr/bin/env python3
"""pitstop's rows of two grids side by side (session 13).

    pitstop_vs_default.py BASEDIR NEWDIR SEED FAMILY...

Per family and rate: pitstop's mean and p99 in BASEDIR/FAMILY-sSEED.json
(the default) and NEWDIR's (an option), their ratios, and the throughput
ratio, as a markdown table.
"""
import json
import sys

if len(sys.argv) < 5:
    print("usage: pitstop_vs_default.py BASEDIR NEWDIR SEED FAMILY...", file=sys.stderr)
    sys.exit(2)
base,new,seed=sys.argv[1:4]
print('| family | rate | mean default → new (s) | p99 default → new (s) | throughput new/default |')
print('|---|---:|---:|---:|---:|')
for fam in sys.argv[4:]:
    b={r['rate']:r for r in json.load(open(f'{base}/{fam}-s{seed}.json'))['runs'] if r['policy']=='pitstop'}
    n={r['rate']:r for r in json.load(open(f'{new}/{fam}-s{seed}.json'))['runs'] if r['policy']=='pitstop'}
    for rate in sorted(n):
        x,y=b[rate],n[rate]
        print(f"| {fam} | {rate:g} | {x['e2e_mean_s']:.3f} → {y['e2e_mean_s']:.3f} ({y['e2e_mean_s']/x['e2e_mean_s']:.3f}x) | {x['e2e_p99_s']:.1f} → {y['e2e_p99_s']:.1f} ({y['e2e_p99_s']/x['e2e_p99_s']:.3f}x) | {y['throughput_rps']/x['throughput_rps']:.4f} |")
