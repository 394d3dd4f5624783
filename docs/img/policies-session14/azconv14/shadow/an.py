#!/usr/bin/env python3
"""The shadow's arrival-order p99 against fcfs's real one.

For each family and rate: fcfs's realized p99 and mean end-to-end time (its
own run on the same arrivals), and the p99 and mean of the end-to-end times
the shadow predicted at each call's arrival inside pitstop's run, with the
default shadow (def) and with -queue; and the same in the 300 s bin of
arrival where fcfs's p99 is highest (the burst).
"""
import sys
def col(p, i):
    return [float(l.split()[i]) for l in open(p)]
def e2e_calls(p):
    return [(float(l.split()[1]), float(l.split()[3]) - float(l.split()[1])) for l in open(p)]
def e2e_dl(p):
    return [(float(l.split()[1]), float(l.split()[3]) - float(l.split()[1])) for l in open(p)]
def p99(v):
    v = sorted(v); return v[len(v) * 99 // 100] if v else float('nan')
print("| family | rate | fcfs p99 / mean, s | shadow p99 / mean (default), s | shadow p99 / mean (-queue), s | burst bin | fcfs p99 | default | -queue |")
print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
for x in sys.argv[1:]:
    f, r = x.split(':')
    fc = e2e_calls(f'{f}-{r}-fcfs.calls')
    d = e2e_dl(f'{f}-{r}-def.dl'); q = e2e_dl(f'{f}-{r}-queue.dl')
    def m(v): return sum(e for _, e in v) / len(v)
    bins = {}
    for a, e in fc: bins.setdefault(int(a // 300), []).append(e)
    b = max(bins, key=lambda k: p99(bins[k]) if len(bins[k]) >= 20 else 0)
    inb = lambda v: [e for a, e in v if int(a // 300) == b]
    print(f"| {f} | {r} | {p99([e for _, e in fc]):.1f} / {m(fc):.1f} | {p99([e for _, e in d]):.1f} / {m(d):.1f} | {p99([e for _, e in q]):.1f} / {m(q):.1f} | {b*300}-{b*300+300} s | {p99(bins[b]):.1f} | {p99(inb(d)):.1f} | {p99(inb(q)):.1f} |")
