#!/usr/bin/env python3
"""The screening table of sessions 8 and 9 (docs/results-policies.md): each
variant's pitstop at each point against the other policies of the baselines.
Cell: mean / best other mean, p99 / lowest other p99, calls/s / highest other,
recompute M tokens (with --swap also swap-out GB), then the four bars, ✓ where
each holds: mean lowest with a 0.1 % tie, p99 within 1.1x, throughput within
0.98x, recompute <= infercept's. The last row counts the bars met per variant;
--counts adds a table of them per bar.

POINTS has a line per point, "TAG WORKLOAD PROFILE RATE"; the runs of a point
are TAG.json (pitstop bench --json) in each baseline dir (BASE, comma-separated
dirs read together) and in each variant dir (a column each, named by the dir).

usage: policy_screen_table.py [--swap] [--counts] POINTS BASE VARIANT_DIR..."""
import argparse
import json
import os


def runs(path):
    if not os.path.exists(path):
        return []
    return json.load(open(path))['runs']


def profile(p):
    return 'vicuna' if 'vicuna' in p else ('gptj' if 'gptj' in p else 'llama3-8b')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--swap', action='store_true', help='label points with the profile, add swap-out GB (session 9, host room)')
    ap.add_argument('--counts', action='store_true', help='add the bars met per bar (session 9, deadline)')
    ap.add_argument('points')
    ap.add_argument('base', help='baseline dirs, comma-separated')
    ap.add_argument('variants', nargs='+')
    a = ap.parse_args()
    try:
        points = [l.split() for l in open(a.points) if l.strip()]
    except OSError as e:
        ap.error(f'points file: {e.strerror}: {a.points}')
    for i, pt in enumerate(points):
        if len(pt) != 4:
            ap.error(f'{a.points}: point {i + 1} has {len(pt)} fields, want 4: TAG WORKLOAD PROFILE RATE')
    for d in a.base.split(',') + a.variants:
        if not os.path.isdir(d):
            ap.error(f'not a directory: {d}')
    names = [os.path.basename(d.rstrip('/')) for d in a.variants]
    if a.swap:
        head = 'best other mean / lowest other p99 / highest calls/s / infercept recompute, M / infercept swap-out, GB'
    else:
        head = 'best other mean / lowest p99 / calls/s / infercept recompute'
    print(f'| point | {head} | ' + ' | '.join(names) + ' |')
    print('|---|---|' + '---:|' * len(names))
    per = [[0] * 6 for _ in names]  # mean, p99, thr, rc, mean&p99, all
    for tag, w, p, r in points:
        others = [o for b in a.base.split(',') for o in runs(os.path.join(b, tag + '.json')) if o['policy'] != 'pitstop']
        if not others:
            continue
        bm = min(others, key=lambda o: o['e2e_mean_s'])
        bp = min(others, key=lambda o: o['e2e_p99_s'])
        bt = max(o['throughput_rps'] for o in others)
        ics = [o for o in others if o['policy'] == 'infercept']
        if not ics:
            ap.error(f'{tag}: no infercept run in the baselines ({a.base}): the recompute bar needs one')
        ic = ics[0]
        if a.swap:
            row = (f"| {w} ({profile(p)}) @{r} | {bm['policy']} {bm['e2e_mean_s']:.1f} / {bp['policy']} {bp['e2e_p99_s']:.0f} / "
                   f"{bt:.3f} / {ic['recompute_tokens']/1e6:.2f} / {ic['swap_out_bytes']/1e9:.0f} |")
        else:
            row = f"| {w} @{r} | {bm['policy']} {bm['e2e_mean_s']:.1f} / {bp['policy']} {bp['e2e_p99_s']:.0f} / {bt:.3f} / {ic['recompute_tokens']/1e6:.2f} |"
        for i, d in enumerate(a.variants):
            rr = [x for x in runs(os.path.join(d, tag + '.json')) if x['policy'] == 'pitstop']
            if not rr:
                row += ' – |'
                continue
            x = rr[0]
            m, q, t = x['e2e_mean_s'] / bm['e2e_mean_s'], x['e2e_p99_s'] / bp['e2e_p99_s'], x['throughput_rps'] / bt
            rc = x['recompute_tokens']
            bars = [m <= 1.001, q <= 1.1, t >= 0.98, rc <= ic['recompute_tokens']]
            for j, b in enumerate(bars):
                per[i][j] += b
            per[i][4] += bars[0] and bars[1]
            per[i][5] += all(bars)
            mark = ''.join('✓' if b else '✗' for b in bars)
            swap = f" / {x['swap_out_bytes']/1e9:.0f}" if a.swap else ''
            row += f" {m:.3f} / {q:.2f}x / {t:.3f} / {rc/1e6:.2f}{swap} {mark} |"
        print(row)
    print('| bars met | |' + ''.join(f' {sum(s[:4])} |' for s in per))
    if a.counts:
        print()
        print('| variant | bars met | mean | p99 | throughput | recompute | mean and p99 | all four |')
        print('|---|---:|---:|---:|---:|---:|---:|---:|')
        for n, s in zip(names, per):
            print(f'| `{n}` | {sum(s[:4])} | ' + ' | '.join(str(v) for v in s) + ' |')


main()
