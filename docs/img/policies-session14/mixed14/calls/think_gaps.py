#!/usr/bin/env python3
"""Prefix-cache hits by the gap between a call's parent finishing and the call arriving (session 14, mixed14).

    think_gaps.py TRACE...

For the chain calls pN/cJ (J > 0; mixed's chat turns), binned by the think gap
in 10 s steps: calls, context tokens, the fraction hit in the prefix cache and
the tokens missed; and the run's mean free blocks, token rate and the LRU
horizon they imply (free blocks / blocks allocated per second).
"""
import sys
if len(sys.argv) < 2:
    sys.exit("usage: think_gaps.py TRACE...")
import sys,re
from collections import defaultdict
def load(p):
    m={}; arr={}; fin={}
    used=[];
    for line in open(p):
        f=line.split(); k=f[0]
        if k=='M' and f[2] not in m: m[f[2]]=(int(f[3]),int(f[4]))
        elif k=='A': arr[f[2]]=float(f[1])
        elif k=='F': fin[f[2]]=float(f[1])
        elif k=='I': used.append((float(f[1]),int(f[5]),int(f[6]),int(f[3])+int(f[4])))
    return m,arr,fin,used
for p in sys.argv[1:]:
    m,arr,fin,used=load(p)
    # time-weighted free blocks, alloc tokens/s
    tw=0;fw=0;prev=None;tok=0
    for t,u,tot,n in used:
        if prev: tw+=t-prev[0]; fw+=(t-prev[0])*(prev[2]-prev[1])
        prev=(t,u,tot); tok+=n
    span=used[-1][0]-used[0][0]
    print(p,'total blocks',used[0][2],'mean free',fw/tw,'tokens/s',tok/span, 'horizon s (16-tok blocks)', fw/tw/(tok/span/16))
    # chat gaps: calls c<j> with parent c<j-1> in same program
    bins=defaultdict(lambda:[0,0,0])
    for n,(L,h) in m.items():
        mm=re.match(r'(p\d+)/c(\d+)$',n)
        if not mm or mm.group(2)=='0': continue
        par=f"{mm.group(1)}/c{int(mm.group(2))-1}"
        if par not in fin: continue
        gap=arr[n]-fin[par]
        b=min(int(gap//10)*10,200)
        bins[b][0]+=1; bins[b][1]+=L; bins[b][2]+=h
    for b in sorted(bins):
        c,L,h=bins[b]; print(f"  gap {b:4d}-: calls {c:5d} tokens {L:9d} hit {h/L:.3f} miss {L-h}")
