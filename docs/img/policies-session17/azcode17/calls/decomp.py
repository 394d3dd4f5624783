import sys
import os; exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cmp.py')).read().split("a=load")[0])
a=load(sys.argv[1]); b=load(sys.argv[2])
n=len(a)
dt=sum((b[k]['ft']-b[k]['arr'])-(a[k]['ft']-a[k]['arr']) for k in a)/n
dw=sum(b[k]['wait']-a[k]['wait'] for k in a)/n
de=sum((b[k]['fin']-b[k]['arr'])-(a[k]['fin']-a[k]['arr']) for k in a)/n
print("per call: e2e %+.4f ttft %+.4f wait %+.4f rest(decode+prefill after tools) %+.4f"%(de,dt,dw,de-dt-dw))
