#!/usr/bin/env python3
"""Session 8 screening table: each variant's pitstop at each point against the
other policies of session 7's baselines (docs/img/policies-session7/screen/
baselines and baselines-atlas). Cell: mean / best other mean, p99 / lowest
other p99, calls/s / highest other, recompute M tokens; ✓ where the four bars
hold (mean with a 0.1 % tie, p99 within 1.1x, throughput within 0.98x,
recompute ≤ infercept's).
With BASE=DIR the baselines are DIR/<tag>.json instead (session 8's, rerun
with this branch's binary: baselines.sh).
usage: [BASE=DIR] compare.py POINTS VARIANT_DIR...  (a column per variant dir)"""
import json, os, sys

S7 = os.path.join(os.path.dirname(__file__), '..', '..', 'policies-session7', 'screen')


def runs(path):
    if not os.path.exists(path):
        return []
    return json.load(open(path))['runs']


def main():
    points = [l.split() for l in open(sys.argv[1]) if l.strip()]
    dirs = sys.argv[2:]
    print('| point | best other mean / lowest p99 / calls/s / infercept recompute | ' + ' | '.join(os.path.basename(d.rstrip('/')) for d in dirs) + ' |')
    print('|---|---|' + '---:|' * len(dirs))
    score = [0] * len(dirs)
    for tag, w, p, r in points:
        if os.environ.get('BASE'):
            others = runs(os.path.join(os.environ['BASE'], tag + '.json'))
        else:
            others = runs(os.path.join(S7, 'baselines', tag + '.json')) + runs(os.path.join(S7, 'baselines-atlas', tag + '.json'))
        if not others:
            continue
        others = [o for o in others if o['policy'] != 'pitstop']
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
            score[i] += sum(bars)
            mark = ''.join('✓' if b else '✗' for b in bars)
            row += f" {m:.3f} / {q:.2f}x / {t:.3f} / {rc/1e6:.2f} {mark} |"
        print(row)
    print('| bars met | |' + ''.join(f' {s} |' for s in score))


main()
