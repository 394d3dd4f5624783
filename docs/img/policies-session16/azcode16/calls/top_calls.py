import sys
def load(f):
    d={}
    for l in open(f):
        i,a,ad,ft,fin,pl,g,pr=l.split()
        d[int(i)]=dict(a=float(a),ad=float(ad),ft=float(ft),fin=float(fin),pl=int(pl),g=int(g),pr=int(pr))
    return d
A=load(sys.argv[1]); B=load(sys.argv[2]) if len(sys.argv)>2 else None
e2e=sorted(((c['fin']-c['a']),i) for i,c in A.items())
n=len(e2e); import math
k=int(math.ceil(0.99*n))-1
print("n",n,"p99 idx",k,"p99",e2e[k][0])
print("rank e2e queue prefill decode prompt out arrival | other e2e queue")
for r,(x,i) in enumerate(e2e[::-1][:30]):
    c=A[i]
    s="%3d %6.1f %6.1f %5.1f %6.1f %6d %5d %8.1f"%(n-r,x,c['ad']-c['a'],c['ft']-c['ad'],c['fin']-c['ft'],c['pl'],c['g'],c['a'])
    if B: o=B[i]; s+=" | %6.1f %6.1f"%(o['fin']-o['a'],o['ad']-o['a'])
    print(s)
