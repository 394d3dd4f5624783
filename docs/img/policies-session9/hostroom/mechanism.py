#!/usr/bin/env python3
"""Session 9: the host tier's figures (bench JSON host_tier) per policy and
variant at each point: swap-outs refused for want of host room (calls, M
tokens lost), time-weighted host use and the share held by calls waiting for
a swap-in, time at >= 95 % full, swap-in wait mean / p99 s.
usage: mechanism.py POINTS DIR VARIANT...  (baselines from DIR/baselines)"""
import json, os, sys

points = [l.split() for l in open(sys.argv[1]) if l.strip()]
top, variants = sys.argv[2], sys.argv[3:]
print('| point | policy | refused swap-outs (calls / M tokens) | host used | held by calls waiting for a swap-in | time >= 95 % full | swap-in wait mean / p99, s | recompute, M |')
print('|---|---|---:|---:|---:|---:|---:|---:|')
for tag, w, p, r in points:
    rows = []
    for v in ['baselines'] + variants:
        f = os.path.join(top, v, tag + '.json')
        if not os.path.exists(f):
            continue
        for x in json.load(open(f))['runs']:
            name = x['policy'] if v == 'baselines' else f"pitstop {v}"
            if v == 'baselines' and x['policy'] not in ('infercept', 'lamps'):
                continue
            h = x.get('host_tier') or {}
            n = sum((h.get('refused_swaps') or {}).values())
            tok = sum((h.get('refused_swap_tokens') or {}).values())
            rows.append(f"| {w} @{r} | {name} | {n} / {tok/1e6:.2f} | {h.get('used_mean', 0):.2f} | {h.get('runnable_mean', 0):.2f} | "
                        f"{h.get('full_fraction', 0):.2f} | {h.get('swap_in_wait_mean_s', 0):.1f} / {h.get('swap_in_wait_p99_s', 0):.0f} | {x['recompute_tokens']/1e6:.2f} |")
    print('\n'.join(rows))
