#!/usr/bin/env python3
"""Prefix-cache misses call by call, two policies on the same arrivals (session 14, mixed14).

    prefix_misses.py TRACE_A TRACE_B

TRACE_* are call-trace.patch's dumps (PITSTOP_TRACE=FILE bin/pitstop bench ...).
Per call, the tokens it had to prefill at its first admission (context minus
the prefix-cache hit, the M lines); the totals, how many calls prefilled more
under A than under B and by how many tokens, and the fifteen largest.
"""
import sys
if len(sys.argv) < 3:
    sys.exit("usage: prefix_misses.py TRACE_A TRACE_B")
import sys
from collections import defaultdict
def load(p):
    m={}; arr={}; fin={}; first={}
    for line in open(p):
        f=line.split()
        k=f[0]
        if k=='M':
            # first match per call (admission); keep list
            m.setdefault(f[2],[]).append((float(f[1]),int(f[3]),int(f[4])))
        elif k=='A': arr[f[2]]=float(f[1])
        elif k=='F': fin[f[2]]=float(f[1])
        elif k=='T' and f[2] not in first: first[f[2]]=float(f[1])
    return m,arr,fin,first
a=load(sys.argv[1]); b=load(sys.argv[2])
ma,mb=a[0],b[0]
tot_a=tot_b=0; diff=[]
for n in ma:
    if n not in mb: continue
    ha=ma[n][0]; hb=mb[n][0]
    la=ha[1]-ha[2]; lb=hb[1]-hb[2]
    tot_a+=la; tot_b+=lb
    if la!=lb: diff.append((la-lb,n,ha,hb))
print('prefill need at first admission A',tot_a,'B',tot_b,'diff',tot_a-tot_b)
diff.sort()
pos=[d for d in diff if d[0]>0]; neg=[d for d in diff if d[0]<0]
print('A more:',len(pos),sum(d[0] for d in pos),' B more:',len(neg),sum(d[0] for d in neg))
big=[d for d in pos if d[0]>=256]
print('A more by >=256:',len(big),sum(d[0] for d in big))
bigb=[d for d in neg if d[0]<=-256]
print('B more by >=256:',len(bigb),sum(d[0] for d in bigb))
for d in pos[-15:]:
    n=d[1]; print(d[0],n,'A adm',d[2],'B adm',d[3],'arrA',a[1].get(n),'arrB',b[1].get(n))
# readmissions (multiple M)
ra=sum(len(v)-1 for v in ma.values()); rb=sum(len(v)-1 for v in mb.values())
print('extra matches A',ra,'B',rb)
