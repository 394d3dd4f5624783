"""The 24 longest calls (end-to-end) of a per-call dump written by
experiments.patch (PITSTOP_CALLDUMP=FILE bench ...): name, arrival, first
token, finish, prompt, generated, waited, preemptions, admitted (seconds).
queue = admitted - arrival; onDevToFirst = first token - admitted.

    python3 top_calls.py DUMP...
"""
import sys
for f in sys.argv[1:]:
    rows=[]
    for l in open(f):
        n,a,ft,fi,pl,g,w,pre,ad=l.split()
        a,ft,fi,w,ad=map(float,(a,ft,fi,w,ad)); pl,g,pre=int(pl),int(g),int(pre)
        rows.append((fi-a,ft-a,ad-a,ft-ad,fi-ft,pl,g,a))
    rows.sort(reverse=True)
    print(f, "n",len(rows))
    print("   e2e   ttft queue  onDevToFirst decode  prompt gen arrival")
    for r in rows[:24]:
        print(" ".join(f"{x:6.1f}" if isinstance(x,float) else f"{x:6d}" for x in r))
