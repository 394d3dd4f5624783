import json,sys,os
# merge.py BASEDIR NEWDIR OUTDIR seed fam... : baseline runs with NEWDIR's policies replacing theirs
base,new,out,seed=sys.argv[1:5]; fams=sys.argv[5:]
os.makedirs(out,exist_ok=True)
for f in fams:
    b=json.load(open(f"{base}/{f}-s{seed}.json")); n=json.load(open(f"{new}/{f}-s{seed}.json"))
    pols={r['policy'] for r in n['runs']}
    b['runs']=[r for r in b['runs'] if r['policy'] not in pols]+n['runs']
    json.dump(b,open(f"{out}/{f}-s{seed}.json","w"))
