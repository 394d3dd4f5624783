import sys
def load(p):
    d={}
    for l in open(p):
        f=l.split()
        d[f[0]]=dict(prog=f[1],arr=float(f[2]),ft=float(f[3]),fin=float(f[4]),prompt=int(f[5]),gen=int(f[6]),seg=int(f[7]),wait=float(f[8]))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2])
tot=0; rows=[]
for k in a:
    ea=a[k]['fin']-a[k]['arr']; eb=b[k]['fin']-b[k]['arr']
    rows.append((eb-ea,k,ea,eb,a[k],b[k]))
    tot+=eb-ea
n=len(rows)
print("mean a %.4f b %.4f diff %.4f (%.3f%%)"%(sum(r[2] for r in rows)/n,sum(r[3] for r in rows)/n,tot/n,100*tot/sum(r[2] for r in rows)))
rows.sort()
pos=sum(r[0] for r in rows if r[0]>0); neg=sum(r[0] for r in rows if r[0]<0)
print("gains %.3f losses %.3f; n worse %d better %d"%(neg,pos,sum(1 for r in rows if r[0]>1e-6),sum(1 for r in rows if r[0]<-1e-6)))
K=int(sys.argv[3]) if len(sys.argv)>3 else 10
for r in rows[:K]+rows[-K:]:
    d,k,ea,eb,x,y=r
    print("%+8.3f %-28s arr %8.2f e2e %7.2f->%7.2f ttft %6.3f->%6.3f prompt %5d gen %5d seg %d wait %.2f->%.2f"%(d,k,x['arr'],ea,eb,x['ft']-x['arr'],y['ft']-y['arr'],x['prompt'],x['gen'],x['seg'],x['wait'],y['wait']))
