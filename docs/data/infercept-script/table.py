"""Prints docs/results-infercept-script.md's tables from pitstop bench JSON reports:
means over the reports given (one per seed) of each (rate, policy) run.
Recompute share = recomputed tokens x 0.0463 ms (the infercept-script profile's
per-token cost) over the run's engine time."""
import json, sys, statistics as st
files=sys.argv[1:]
runs={}
for f in files:
    r=json.load(open(f))
    for x in r['runs']:
        runs.setdefault((x['rate'],x['policy']),[]).append(x)
order=[]
for f in files:
    for x in json.load(open(f))['runs']:
        if (x['rate'],x['policy']) not in order:
            order.append((x['rate'],x['policy']))
def m(l,k): return st.mean(v[k] for v in l)
def sd(l,k): return st.stdev(v[k] for v in l) if len(l)>1 else 0
print("| rate | policy | seeds | completed/requests | e2e mean s | e2e p99 s | TTFT mean s | throughput calls/s | recomputed tokens (M) | recompute share of engine time | swapped out (GB) | handling P/S/D |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for k in order:
    l=runs[k]
    h={}
    for v in l:
        for a,b in (v.get('handling') or {}).items(): h[a]=h.get(a,0)+b
    hs="/".join(str(round(h.get(a,0)/len(l))) for a in ('preserve','swap','discard'))
    print(f"| {k[0]:g} | {k[1]} | {len(l)} | {m(l,'completed'):.0f}/{m(l,'requests'):.0f} | {m(l,'e2e_mean_s'):.1f} ± {sd(l,'e2e_mean_s'):.1f} | {m(l,'e2e_p99_s'):.0f} | {m(l,'ttft_mean_s'):.2f} | {m(l,'throughput_rps'):.3f} | {m(l,'recompute_tokens')/1e6:.2f} | {st.mean(v['recompute_tokens']*0.0463e-3/v['virtual_s'] for v in l)*100:.0f}% | {m(l,'swap_out_bytes')/1e9:.0f} | {hs} |")
