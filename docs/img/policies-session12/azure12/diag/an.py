import sys
def load(p):
    d={}
    for l in open(p):
        n,a,f,t,pr,g=l.split(); d[n]=(float(a),float(f),float(t),int(pr),int(g))
    return d
A=load(sys.argv[1]); B=load(sys.argv[2])
import statistics as st
diff=[(B[n][2]-B[n][0])-(A[n][2]-A[n][0]) for n in A]
print("mean e2e A %.3f B %.3f"%(st.mean(A[n][2]-A[n][0] for n in A), st.mean(B[n][2]-B[n][0] for n in B)))
print("mean ttft A %.3f B %.3f"%(st.mean(A[n][1]-A[n][0] for n in A), st.mean(B[n][1]-B[n][0] for n in B)))
# buckets by prompt
bk=[0,500,1000,2000,4000,8000,16000,1e9]
for i in range(len(bk)-1):
    ns=[n for n in A if bk[i]<=A[n][3]<bk[i+1]]
    if not ns: continue
    da=sum(A[n][2]-A[n][0] for n in ns); db=sum(B[n][2]-B[n][0] for n in ns)
    wa=sum(A[n][1]-A[n][0] for n in ns); wb=sum(B[n][1]-B[n][0] for n in ns)
    print("prompt [%d,%d) n=%d  sum e2e A %.0f B %.0f (delta %+.0f)  sum ttft A %.0f B %.0f  mean out %.0f"%(bk[i],bk[i+1],len(ns),da,db,db-da,wa,wb,st.mean(A[n][4] for n in ns)))
tot=sum(diff); print("total delta %.0f s over %d calls"%(tot,len(diff)))
pos=sum(x for x in diff if x>0); neg=sum(x for x in diff if x<0)
print("gains(slower) %.0f losses(faster) %.0f; slower calls %d faster %d"%(pos,neg,sum(1 for x in diff if x>0.01),sum(1 for x in diff if x<-0.01)))
