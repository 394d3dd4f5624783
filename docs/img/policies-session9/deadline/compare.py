#!/usr/bin/env python3
"""Session 9 screening table (session 8's compare.py with per-bar counts):
each variant's pitstop at each point against the baselines in BASE/<tag>.json
(rerun with this branch's binary: session 8's baselines.sh). Cell: mean / best
other mean, p99 / lowest other p99, calls/s / highest other, recompute M
tokens; ✓ where the four bars hold (mean lowest with a 0.1 % tie, p99 within
1.1x, throughput within 0.98x, recompute ≤ infercept's). Below the table, per
variant: bars met per bar, mean and p99 together, all four.
usage: BASE=DIR compare.py POINTS VARIANT_DIR...  (a column per variant dir)"""
import json, os, sys


def runs(path):
    if not os.path.exists(path):
        return []
    return json.load(open(path))['runs']


def main():
    points = [l.split() for l in open(sys.argv[1]) if l.strip()]
    dirs = sys.argv[2:]
    names = [os.path.basename(d.rstrip('/')) for d in dirs]
    print('| point | best other mean / lowest p99 / calls/s / infercept recompute | ' + ' | '.join(names) + ' |')
    print('|---|---|' + '---:|' * len(dirs))
    per = [[0] * 6 for _ in dirs]  # mean, p99, thr, rc, mean&p99, all
    for tag, w, p, r in points:
        others = [o for o in runs(os.path.join(os.environ['BASE'], tag + '.json')) if o['policy'] != 'pitstop']
        if not others:
            continue
        bm = min(others, key=lambda o: o['e2e_mean_s'])
        bp = min(others, key=lambda o: o['e2e_p99_s'])
        bt = max(o['throughput_rps'] for o in others)
        ic = [o['recompute_tokens'] for o in others if o['policy'] == 'infercept'][0]
        row = f"| {w} @{r} | {bm['policy']} {bm['e2e_mean_s']:.1f} / {bp['policy']} {bp['e2e_p99_s']:.0f} / {bt:.3f} / {ic/1e6:.2f} |"
        for i, d in enumerate(dirs):
            rr = [x for x in runs(os.path.join(d, tag + '.json')) if x['policy'] == 'pitstop']
            if not rr:
                row += ' – |'
                continue
            x = rr[0]
            m, q, t = x['e2e_mean_s'] / bm['e2e_mean_s'], x['e2e_p99_s'] / bp['e2e_p99_s'], x['throughput_rps'] / bt
            rc = x['recompute_tokens']
            bars = [m <= 1.001, q <= 1.1, t >= 0.98, rc <= ic]
            for j, b in enumerate(bars):
                per[i][j] += b
            per[i][4] += bars[0] and bars[1]
            per[i][5] += all(bars)
            mark = ''.join('✓' if b else '✗' for b in bars)
            row += f" {m:.3f} / {q:.2f}x / {t:.3f} / {rc/1e6:.2f} {mark} |"
        print(row)
    print('| bars met | |' + ''.join(f' {sum(s[:4])} |' for s in per))
    print()
    print('| variant | bars met | mean | p99 | throughput | recompute | mean and p99 | all four |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    for n, s in zip(names, per):
        print(f'| `{n}` | {sum(s[:4])} | ' + ' | '.join(str(v) for v in s) + ' |')


main()
