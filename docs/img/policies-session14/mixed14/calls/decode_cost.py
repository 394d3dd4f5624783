#!/usr/bin/env python3
"""What one decoded token waits, by iteration kind (session 14, mixed14).

    decode_cost.py TRACE...

Per trace, iterations with decodes only, with decodes and prefill chunks, and
prefill only: their decode tokens and the sum over them of the iteration's
duration (the time between two iteration events; gaps over 1 s, idle, left
out), so sum/tokens is a decoded token's mean iteration time.
"""
import sys
if len(sys.argv) < 2:
    sys.exit("usage: decode_cost.py TRACE...")
import sys
for p in sys.argv[1:]:
    rows=[]
    for line in open(p):
        if line[0]!='I': continue
        f=line.split(); rows.append((float(f[1]),int(f[2]),int(f[3]),int(f[4])))
    # duration of iteration i: next event time - t? I is emitted at end of iteration presumably; duration = t_i - t_{i-1} (upper bound incl idle)
    A={'dec-only':[0,0,0],'mixed':[0,0,0],'pre-only':[0,0,0]}
    for i in range(1,len(rows)):
        t,s,pt,dt=rows[i]; d=t-rows[i-1][0]
        k='mixed' if pt and dt else ('pre-only' if pt else 'dec-only')
        if d>1: continue  # idle gap
        A[k][0]+=1; A[k][1]+=d*dt; A[k][2]+=dt
    print(p)
    for k,(n,w,dt) in A.items(): print(f"  {k:9s} iters {n:6d} decode tokens {dt:8d} sum d*dec {w:10.1f} s/tok {w/max(dt,1):.6f}")
