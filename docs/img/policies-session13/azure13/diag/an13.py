#!/usr/bin/env python3
"""Per-call analysis of azure-code @1 (session 13): reads the diagnostic
build's dumps (diag13.patch: DIAG_CALLS "name arrival first-token finish
prompt output", DIAG_PROM one line per promotion "name now due laxity need
realized-p99 arrival-order-p99", DIAG_DL one line per call's shadow entry
"name arrival start end floor slots") and prints the figures quoted in
docs/results-policies.md, session 13.

usage: an13.py DIR   (DIR holds calls-default.txt (aging+warm), calls-gated-fit.txt,
                      calls-fcfs.txt, prom-gated-fit.txt, dl-gated-fit.txt)
"""
import statistics
import sys


def calls(path):
    d = {}
    for line in open(path):
        n, a, ft, fi, p, o = line.split()
        d[n] = (float(a), float(ft), float(fi), int(p), int(o))
    return d


def p99(xs):
    xs = sorted(xs)
    return xs[int(len(xs) * 0.99)]


def main(dir):
    dflt = calls(f"{dir}/calls-default.txt")
    gf = calls(f"{dir}/calls-gated-fit.txt")
    fcfs = calls(f"{dir}/calls-fcfs.txt")
    bar = 1.1 * p99(v[2] - v[0] for v in fcfs.values())
    print(f"bar: p99 <= {bar:.2f} s (1.1x fcfs's)")
    for name, d in (("fcfs", fcfs), ("aging+warm", dflt), ("gated-fit", gf)):
        over = [v for v in d.values() if v[2] - v[0] > bar]
        short_ttft = sum(1 for v in over if v[1] - v[0] < 1.5)
        print(f"{name}: {len(over)} calls past the bar ({short_ttft} with TTFT < 1.5 s); "
              f"mean {statistics.mean(v[2] - v[0] for v in d.values()):.3f} s")
    prom = [l.split() for l in open(f"{dir}/prom-gated-fit.txt")]
    e = [dflt[p[0]][2] - dflt[p[0]][0] for p in prom]
    print(f"promotions: {len(prom)}; the same calls under aging+warm: "
          f"{sum(1 for x in e if x <= 40)} ended within 40 s, {sum(1 for x in e if 40 < x <= bar)} in (40, bar], "
          f"{sum(1 for x in e if x > bar)} past the bar")
    shadow = {}
    for line in open(f"{dir}/dl-gated-fit.txt"):
        n, a, st, en, fl, c = line.split()
        shadow[n] = (float(a), float(st) - float(a), float(en) - float(a))
    print(f"shadow p99 (end-to-end it predicts at arrival): {p99(v[2] for v in shadow.values()):.2f} s; "
          f"fcfs's realized: {p99(v[2] - v[0] for v in fcfs.values()):.2f} s")
    for lo, hi in ((560, 610), (1460, 1500)):
        r = [(fcfs[k][2] - fcfs[k][0]) / v[2] for k, v in shadow.items() if lo <= v[0] < hi and v[2] > 0]
        print(f"  arrivals {lo}-{hi} s: {len(r)} calls, fcfs's end-to-end / the shadow's, median {statistics.median(r):.2f}")

    # the p99 of the last 1,000 calls finished, as the lane's realized window holds it
    for name, d in (("fcfs", fcfs), ("aging+warm", dflt), ("gated-fit", gf)):
        row = []
        for t in (600, 700, 900, 1300, 1464, 1500):
            done = sorted((v[2], v[2] - v[0]) for v in d.values() if v[2] <= t)[-1000:]
            row.append(f"{t}s {p99([x[1] for x in done]):.1f}")
        print(f"window p99 (last 1,000 finished), {name}: " + ", ".join(row))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: an13.py DIR", file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
