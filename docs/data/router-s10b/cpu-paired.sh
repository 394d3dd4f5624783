#!/usr/bin/env bash
# paired CPU per call: six alternated runs of each binary
cd /tmp/r14g
for i in 1 2 3 4 5 6; do
  for v in base new; do
    for spec in "json 20000" "stream 20000" "long 2000"; do
      set -- $spec
      t=$( { /usr/bin/time -f "%U %S" nice -n 10 ./api_$v.test -test.run '^$' -test.bench "BenchmarkRouterCall/$1\$" -test.benchmem -test.cpu 1 -test.benchtime ${2}x > /tmp/r14g/last.txt; } 2>&1 | tail -1)
      a=$(grep -o '[0-9]* allocs/op' /tmp/r14g/last.txt)
      echo "$i $v $1 $2 $t $a load=$(cut -d' ' -f1 /proc/loadavg)" | awk '{printf "%s %s %s cpu_us_per_call=%.1f %s %s %s\n",$1,$2,$3,($5+$6)*1e6/$4,$7,$8,$9}'
    done
    l=$(nice -n 10 ./api_$v.test -test.run '^$' -test.bench 'BenchmarkRouterLoopback/transport=inline' -test.benchmem -test.benchtime 5000x 2>&1 | grep Bench)
    echo "$i $v loopback $l"
  done
done
