#!/usr/bin/env python3
"""Session 9: seeds 1-3 at the points where --pitstop-hostroom admit changes a
verdict; one row per point and variant, one cell per seed (the cell of
scripts/policy_screen_table.py --swap).
usage: seeds.py POINTS VARIANT..."""
import json, os, sys

here = os.path.dirname(os.path.abspath(__file__))


def runs(path):
    return json.load(open(path))['runs'] if os.path.exists(path) else []


points = [l.split() for l in open(sys.argv[1]) if l.strip()]
print('| point | variant | seed 1 | seed 2 | seed 3 | bars met |')
print('|---|---|---|---|---|---:|')
for tag, w, p, r in points:
    for v in sys.argv[2:]:
        cells, met = [], 0
        for s in (1, 2, 3):
            d = os.path.join(here, f'seed{s}')
            others = [o for o in runs(os.path.join(d, 'baselines', tag + '.json')) if o['policy'] != 'pitstop']
            x = [o for o in runs(os.path.join(d, v, tag + '.json')) if o['policy'] == 'pitstop']
            if not others or not x:
                cells.append('–')
                continue
            x = x[0]
            bm = min(o['e2e_mean_s'] for o in others)
            bp = min(o['e2e_p99_s'] for o in others)
            bt = max(o['throughput_rps'] for o in others)
            ic = [o['recompute_tokens'] for o in others if o['policy'] == 'infercept'][0]
            m, q, t, rc = x['e2e_mean_s'] / bm, x['e2e_p99_s'] / bp, x['throughput_rps'] / bt, x['recompute_tokens']
            bars = [m <= 1.001, q <= 1.1, t >= 0.98, rc <= ic]
            met += sum(bars)
            cells.append(f"{m:.3f} / {q:.2f}x / {t:.3f} / {rc/1e6:.2f} vs {ic/1e6:.2f} {''.join('✓' if b else '✗' for b in bars)}")
        prof = 'vicuna' if 'vicuna' in p else 'gptj'
        print(f"| {w} ({prof}) @{r} | {v} | " + ' | '.join(cells) + f' | {met} |')
