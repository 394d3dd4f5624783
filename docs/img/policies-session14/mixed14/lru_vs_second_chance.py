#!/usr/bin/env python3
"""mixed's means and prefill tokens, every policy, lru against second-chance (session 14, mixed14).

    lru_vs_second_chance.py LRU_GRID SECOND_CHANCE_GRID

Each grid holds scripts/policy_rates.sh's mixed-s{1,2,3}.json with all six
policies. Prints two markdown tables: e2e mean (s) and prefill tokens (M),
"lru -> second-chance" per policy, seed and rate (0 where a report has no
prefill counter).
"""
import json, sys
if len(sys.argv) < 3:
    sys.exit("usage: lru_vs_second_chance.py LRU_GRID SECOND_CHANCE_GRID")
A=sys.argv[1]; B=sys.argv[2]
pols=['fcfs','vllm-opt','infercept','lamps','atlas','pitstop']
print('| seed | rate | '+' | '.join(pols)+' |')
for s in (1,2,3):
    a={(r['policy'],r['rate']):r for r in json.load(open(f'{A}/mixed-s{s}.json'))['runs']}
    b={(r['policy'],r['rate']):r for r in json.load(open(f'{B}/mixed-s{s}.json'))['runs']}
    for rate in (0.2,0.5,0.7):
        cells=[]
        for p in pols:
            ra,rb=a.get((p,rate)),b.get((p,rate))
            if not ra or not rb: cells.append('-'); continue
            cells.append(f"{ra['e2e_mean_s']:.4f} → {rb['e2e_mean_s']:.4f}")
        print(f'| {s} | {rate} | '+' | '.join(cells)+' |')
print()
print('prefill tokens (M), lru → second-chance')
for s in (1,2,3):
    a={(r['policy'],r['rate']):r for r in json.load(open(f'{A}/mixed-s{s}.json'))['runs']}
    b={(r['policy'],r['rate']):r for r in json.load(open(f'{B}/mixed-s{s}.json'))['runs']}
    for rate in (0.2,0.5,0.7):
        print(f'| {s} | {rate} | '+' | '.join(f"{a[(p,rate)].get('prefill_tokens',0)/1e6:.3f} → {b[(p,rate)].get('prefill_tokens',0)/1e6:.3f}" for p in pols)+' |')
