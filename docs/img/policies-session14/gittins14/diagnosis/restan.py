import sys, collections, random
W=float(sys.argv[2]) if len(sys.argv)>2 else 1.0
MINW=int(sys.argv[3]) if len(sys.argv)>3 else 20
rows=[l.split()[1:] for l in open(sys.argv[1]) if l.startswith("REST ")]
rows=[(float(a),float(b),float(c),float(d),float(e),int(f)) for a,b,c,d,e,f in rows]
win=collections.defaultdict(list)
for r in rows: win[int(r[0]/W)].append(r)
def conc(xs, key):
    agree=tot=0
    for _ in range(2000):
        a,b=random.sample(xs,2)
        if a[1]==b[1]: continue
        tot+=1
        older,younger=(a,b) if a[1]<b[1] else (b,a)
        if key(older)<key(younger): agree+=1
    return agree/tot if tot else float('nan')
random.seed(1)
ck=cm=n=0; share=[]
for w,xs in win.items():
    if len(xs)<MINW: continue
    a1,a2=conc(xs,lambda r:r[3]),conc(xs,lambda r:r[2])
    if a1==a1 and a2==a2: ck+=a1; cm+=a2; n+=1
for r in rows:
    share.append(r[2]/r[3] if r[3]>0 else 0)
share.sort()
print(f"samples {len(rows)} windows {n}: P(older program's call has the lower key): gittins-rest key {ck/n:.3f}, m alone {cm/n:.3f}")
print("m/key quantiles p10 p50 p90:", [round(share[int(q*(len(share)-1))],3) for q in (0.1,0.5,0.9)])
act=[r for r in rows if r[5]>1]
print(f"calls with a sibling in the engine (q=0): {len(act)/len(rows):.3f}")
def concb(xs):
    agree=tot=0
    for _ in range(2000):
        a,b=random.sample(xs,2)
        if a[1]==b[1] or a[4]==b[4]: continue
        tot+=1
        more,less=(a,b) if a[4]>b[4] else (b,a)
        if more[3]<less[3]: agree+=1
    return agree/tot if tot else float('nan')
def concab(xs):
    agree=tot=0
    for _ in range(2000):
        a,b=random.sample(xs,2)
        if a[1]==b[1] or a[4]==b[4]: continue
        tot+=1
        older,younger=(a,b) if a[1]<b[1] else (b,a)
        if older[4]>younger[4]: agree+=1
    return agree/tot if tot else float('nan')
c=c2=n=0
for w,xs in win.items():
    if len(xs)<MINW: continue
    a1,a2=concb(xs),concab(xs)
    if a1==a1 and a2==a2: c+=a1; c2+=a2; n+=1
print(f"P(the program further along (larger b) has the lower key): {c/n:.3f}; P(the older program is further along): {c2/n:.3f}")
