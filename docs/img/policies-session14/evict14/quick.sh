#!/bin/bash
# quick.sh TAG BIN extra-flags... : mixed@0.7 s3, react@8 s1
tag=$1 bin=$2; shift 2
d=/tmp/evict14/q-$tag; mkdir -p $d
nice -n 10 $bin bench --workload mixed --policies pitstop --duration 1800 --seed 3 --stop-after 5400 --parallel 1 --profile a100-80g-llama3-8b --rates 0.7 "$@" --json $d/mixed-s3.json > $d/mixed-s3.txt 2>&1 &
nice -n 10 $bin bench --workload react --policies pitstop --duration 1800 --seed 1 --stop-after 5400 --parallel 1 --profile a100-80g-llama3-8b --rates 8 "$@" --json $d/react-s1.json > $d/react-s1.txt 2>&1
wait
python3 - $d <<'PY'
import json,sys
for f in ['mixed-s3','react-s1']:
    for r in json.load(open(f'{sys.argv[1]}/{f}.json'))['runs']:
        print(f, r['rate'], 'mean %.4f p99 %.3f tput %.3f prefill %d' % (r['e2e_mean_s'], r['e2e_p99_s'], r['throughput_rps'], r['prefill_tokens']))
PY
