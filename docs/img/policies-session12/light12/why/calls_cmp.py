import sys, collections
def load(f):
    d={}
    for l in open(f):
        c,a,ft,t,g=l.split(); d[c]=(float(a),float(ft),float(t),int(g))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2])
kind=lambda c: c.split('/')[1].rstrip('0123456789') if '/' in c else c
agg=collections.defaultdict(lambda:[0,0.0,0.0,0.0,0.0])
diffs=[]
for c in a:
    ea=a[c][2]-a[c][0]; eb=b[c][2]-b[c][0]
    k=kind(c); g=agg[k]; g[0]+=1; g[1]+=ea; g[2]+=eb; g[3]+=(a[c][1]-a[c][0]); g[4]+=(b[c][1]-b[c][0])
    diffs.append((ea-eb,c,ea,eb))
n=len(a)
print("kind calls  sum_e2e_A  sum_e2e_B  (A-B)/n_total  ttft_mean A B")
for k,g in sorted(agg.items()):
    print(k,g[0],round(g[1],1),round(g[2],1),round((g[1]-g[2])/n,4),round(g[3]/g[0],3),round(g[4]/g[0],3))
diffs.sort()
print("A faster most:",[ (round(d,2),c) for d,c,_,_ in diffs[:5]])
print("A slower most:",[ (round(d,2),c) for d,c,_,_ in diffs[-8:]])
pos=sum(d for d,*_ in diffs if d>0); neg=sum(d for d,*_ in diffs if d<0)
print("sum slower",round(pos,1),"sum faster",round(neg,1),"net/n",round((pos+neg)/n,4), "calls slower", sum(1 for d,*_ in diffs if d>0.01), "faster", sum(1 for d,*_ in diffs if d<-0.01))
