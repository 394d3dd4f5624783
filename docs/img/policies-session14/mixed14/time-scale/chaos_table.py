#!/usr/bin/env python3
"""mixed's mean bar under arrival and think times scaled by 1 -+ 1e-4 (session 14, mixed14).

    chaos_table.py GRID CHAOS

GRID: the default grid (scale 1, every policy); CHAOS: chaos.sh's reports
(pitstop, vllm-opt, lamps, atlas; infercept equals vllm-opt on mixed, fcfs is
far behind). Per seed and rate: pitstop's mean, the best other's, their ratio
and whether the mean bar holds (pitstop <= 1.001 x the best other).
"""
import json, sys
if len(sys.argv) < 3:
    sys.exit("usage: chaos_table.py GRID CHAOS")
grid, chaos = sys.argv[1:3]
others = ['vllm-opt', 'lamps', 'atlas']
def runs(path):
    return {(r['policy'], r['rate']): r for r in json.load(open(path))['runs']}
print('| seed | rate | time scale | pitstop mean | best other | pitstop / best | prefill M pitstop / best other | bar |')
print('|---|---:|---:|---:|---|---:|---|---|')
for s in (1, 2, 3):
    for rate in (0.5, 0.7):
        for st, path in (('1', f'{grid}/mixed-s{s}.json'), ('0.9999', f'{chaos}/st0.9999-s{s}.json'), ('1.0001', f'{chaos}/st1.0001-s{s}.json')):
            try:
                d = runs(path)
            except FileNotFoundError:
                continue
            p = d[('pitstop', rate)]
            b = min((d[(o, rate)] for o in others), key=lambda r: r['e2e_mean_s'])
            ratio = p['e2e_mean_s'] / b['e2e_mean_s']
            print(f"| {s} | {rate} | {st} | {p['e2e_mean_s']:.4f} | {b['policy']} {b['e2e_mean_s']:.4f} | {ratio:.4f} | "
                  f"{p.get('prefill_tokens', 0)/1e6:.3f} / {b.get('prefill_tokens', 0)/1e6:.3f} | {'met' if ratio <= 1.001 else 'not met'} |")
