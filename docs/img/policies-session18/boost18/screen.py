#!/usr/bin/env python3
# usage: screen.py TAG "extra flags" point... ; point = fam:rate:seed  (h100 = infercept-multi on h100 12.75)
import json, os, subprocess, sys, concurrent.futures as cf
# BIN the binary, GRID the base grid, SCRATCH where each run's JSON goes (overload18 ran it with its own worktree's paths)
BIN = os.environ.get('BIN', 'bin/pitstop')
GRID = os.environ.get('GRID', 'docs/img/policies-session16/lead/default-grid')
SCRATCH = os.environ.get('SCRATCH', '/tmp/boost18')
prof = {'infercept-multi':'a100-40g-gptj-6b','mixed':'a100-80g-llama3-8b','coding':'a100-80g-llama3-8b','fanout':'a100-80g-llama3-8b',
 'infercept-single':'a100-40g-gptj-6b','infercept-multi-vicuna':'a100-40g-vicuna-13b','infercept-single-vicuna':'a100-40g-vicuna-13b',
 'chat':'a100-80g-llama3-8b','react':'a100-80g-llama3-8b','mcts':'a100-80g-llama3-8b','azure-conv':'a100-80g-llama3-8b',
 'mooncake-conv':'a100-80g-llama3-8b','azure-code':'a100-80g-llama3-8b','h100':'h100-80g-gptj-6b'}
tag, extra, pts = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
def run(pt):
    fam, rate, seed = pt.split(':')
    w = {'h100':'infercept-multi','infercept-multi-vicuna':'infercept-multi','infercept-single-vicuna':'infercept-single'}.get(fam, fam)
    out = f'{SCRATCH}/{tag}-{fam}-{rate}-s{seed}.json'
    if not os.path.exists(out):
        subprocess.run(['nice','-n','10',BIN,'bench','--workload',w,'--executor','sim','--profile',prof[fam],'--policies','pitstop','--rates',rate,'--seed',seed,
            '--duration','1800','--stop-after','5400','--json',out]+extra, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return pt, json.load(open(out))['runs'][0]
with cf.ThreadPoolExecutor(int(os.environ.get('PAR','2'))) as ex:
    res = list(ex.map(run, pts))
for pt, r in res:
    fam, rate, seed = pt.split(':')
    m, p, t = r['e2e_mean_s'], r['e2e_p99_s'], r['throughput_rps']
    if fam == 'h100':
        bm, bp, bt, dm, dp, dt = 221.3, 910, 0, 215.7, 1166, 0
    else:
        g = json.load(open(f'{GRID}/{fam}-s{seed}.json'))['runs']
        rs = [x for x in g if abs(x['rate']-float(rate))<1e-9]
        base = [x for x in rs if x['policy'] in ('fcfs','vllm-opt','infercept','lamps','atlas')]
        d = [x for x in rs if x['policy']=='pitstop'][0]
        bm = min(x['e2e_mean_s'] for x in base); bp = 1.1*min(x['e2e_p99_s'] for x in base); bt = 0.98*max(x['throughput_rps'] for x in base)
        dm, dp, dt = d['e2e_mean_s'], d['e2e_p99_s'], d['throughput_rps']
    ok = m <= bm*1.001 and p <= bp and t >= bt
    print(f"{tag:10s} {pt:22s} mean {m:8.2f} (def {dm:8.2f} bar<{bm:8.2f}) p99 {p:8.1f} (def {dp:8.1f} bar<={bp:8.1f}) thr {t:.4f} (def {dt:.4f} bar>={bt:.4f}) {'PASS' if ok else 'fail'}")
