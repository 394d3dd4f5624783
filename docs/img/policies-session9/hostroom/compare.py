#!/usr/bin/env python3
"""Session 9 screening table (host-tier room): pitstop per variant against the
baselines rerun with the same binary (DIR/baselines/<tag>.json). Cell: mean /
best other mean, p99 / lowest other p99, calls/s / highest other, recompute M
tokens, swap-out GB, then the four bars (mean with a 0.1 % tie, p99 within
1.1x, throughput within 0.98x, recompute <= infercept's).
usage: compare.py POINTS DIR VARIANT...  (a column per variant: DIR/VARIANT)"""
import json, os, sys


def runs(path):
    if not os.path.exists(path):
        return []
    return json.load(open(path))['runs']


def main():
    points = [l.split() for l in open(sys.argv[1]) if l.strip()]
    top, variants = sys.argv[2], sys.argv[3:]
    print('| point | best other mean / lowest other p99 / highest calls/s / infercept recompute, M / infercept swap-out, GB | ' + ' | '.join(variants) + ' |')
    print('|---|---|' + '---:|' * len(variants))
    score = [0] * len(variants)
    for tag, w, p, r in points:
        others = [o for o in runs(os.path.join(top, 'baselines', tag + '.json')) if o['policy'] != 'pitstop']
        if not others:
            continue
        bm = min(others, key=lambda o: o['e2e_mean_s'])
        bp = min(others, key=lambda o: o['e2e_p99_s'])
        bt = max(o['throughput_rps'] for o in others)
        ic = [o for o in others if o['policy'] == 'infercept'][0]
        prof = 'vicuna' if 'vicuna' in p else ('gptj' if 'gptj' in p else 'llama3-8b')
        row = (f"| {w} ({prof}) @{r} | {bm['policy']} {bm['e2e_mean_s']:.1f} / {bp['policy']} {bp['e2e_p99_s']:.0f} / "
               f"{bt:.3f} / {ic['recompute_tokens']/1e6:.2f} / {ic['swap_out_bytes']/1e9:.0f} |")
        for i, v in enumerate(variants):
            rr = [x for x in runs(os.path.join(top, v, tag + '.json')) if x['policy'] == 'pitstop']
            if not rr:
                row += ' – |'
                continue
            x = rr[0]
            m, q, t = x['e2e_mean_s'] / bm['e2e_mean_s'], x['e2e_p99_s'] / bp['e2e_p99_s'], x['throughput_rps'] / bt
            rc = x['recompute_tokens']
            bars = [m <= 1.001, q <= 1.1, t >= 0.98, rc <= ic['recompute_tokens']]
            score[i] += sum(bars)
            mark = ''.join('✓' if b else '✗' for b in bars)
            row += f" {m:.3f} / {q:.2f}x / {t:.3f} / {rc/1e6:.2f} / {x['swap_out_bytes']/1e9:.0f} {mark} |"
        print(row)
    print('| bars met | |' + ''.join(f' {s} |' for s in score))


main()
