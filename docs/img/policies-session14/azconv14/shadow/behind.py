#!/usr/bin/env python3
"""Who waits behind whom at azure-conv @6: pitstop's calls past the p99 bar
(1.1x fcfs's p99), their sizes and waits, and the calls that arrived after
each and got their first token before it (overtakers): how many and how big."""
import sys, statistics as S
def load(p):
    return {l.split()[0]: tuple(float(x) for x in l.split()[1:4]) + (int(l.split()[4]), int(l.split()[5])) for l in open(p)}
fc = load(sys.argv[1]); ps = load(sys.argv[2])
e = sorted(v[2]-v[0] for v in fc.values()); bar = 1.1*e[len(e)*99//100]
late = [(n, v) for n, v in ps.items() if v[2]-v[0] > bar]
print(f"bar {bar:.1f} s; past it: pitstop {len(late)}, fcfs {sum(1 for v in fc.values() if v[2]-v[0] > bar)}")
med = lambda xs: S.median(xs) if xs else float('nan')
print(f"late calls: median prompt {med([v[3] for _, v in late])}, output {med([v[4] for _, v in late])}, wait to first token {med([v[1]-v[0] for _, v in late]):.1f} s, decode (first token to end) {med([v[2]-v[1] for _, v in late]):.1f} s")
allv = list(ps.values())
print(f"all calls: median prompt {med([v[3] for v in allv])}, output {med([v[4] for v in allv])}; mean output {S.mean([v[4] for v in allv]):.0f}")
byfirst = sorted(allv, key=lambda v: v[1])
import bisect
firsts = [v[1] for v in byfirst]
over, osz, oout = [], [], []
for n, v in late:
    lo, hi = bisect.bisect_left(firsts, v[0]), bisect.bisect_left(firsts, v[1])
    o = [w for w in byfirst[lo:hi] if w[0] > v[0]]
    over.append(len(o)); osz += [w[3] for w in o]; oout += [w[4] for w in o]
print(f"overtakers per late call (arrived after it, first token before it): median {med(over)}; their median prompt {med(osz)}, output {med(oout)}")
# the same for fcfs's late calls
late_f = [(n, v) for n, v in fc.items() if v[2]-v[0] > bar]
print(f"fcfs's late calls: median prompt {med([v[3] for _, v in late_f])}, output {med([v[4] for _, v in late_f])}, wait {med([v[1]-v[0] for _, v in late_f]):.1f} s, decode {med([v[2]-v[1] for _, v in late_f]):.1f} s")
# outputs: share of late calls by output bucket vs all
for lo, hi in [(0,100),(100,300),(300,600),(600,10**9)]:
    a = sum(1 for v in allv if lo <= v[4] < hi); l = sum(1 for _, v in late if lo <= v[4] < hi)
    print(f"output {lo}-{hi}: {a} calls, {l} past the bar ({100*l/max(a,1):.1f} %)")
