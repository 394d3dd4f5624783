#!/usr/bin/env bash
# Session 9 (issue 12 Show 3): host-tier room and recompute. The commands behind
# docs/results-policies.md "2026-11-27 (session 9): host-tier room and recompute".
# explore/: infercept-multi @5.2 (gptj), seed 1, one run per build while the rule
# was designed (see the section's table for which build each file is).
set -euo pipefail
# NB: checks out commits in the current tree; run it from a scratch worktree.
here=docs/img/policies-session9/hostroom
# seed1/off and seed1/baselines at 7706bd7 (the baselines and --pitstop-hostroom off
# do not run the rule's code), seed1/admit-only at 7706bd7 (the admission without the
# victim choice, lost in 5e3cdec), seed1/admit and seed1/victim at a611107.
git checkout -q 7706bd7 && go build -o /tmp/hr-7706bd7 ./cmd/pitstop
"$here/screen.sh" /tmp/hr-7706bd7 "$here/seed1" "off"   # and the baselines
git checkout -q a611107 && go build -o /tmp/hr-a611107 ./cmd/pitstop
NO_BASELINES=1 "$here/screen.sh" /tmp/hr-a611107 "$here/seed1" "admit victim"
# seeds 2 and 3 at the points where the rule changes a verdict
for s in 2 3; do
  SEED=$s POINTS="$here/points-seeds.txt" "$here/screen.sh" /tmp/hr-a611107 "$here/seed$s" "off admit"
done
# The tables: compare.py as of a611107 (checked out above), since then
# scripts/policy_screen_table.py --swap POINTS DIR/baselines DIR/VARIANT..., the same output.
python3 "$here/compare.py" "$here/points.txt" "$here/seed1" off admit-only victim admit >"$here/seed1/table.md"
python3 "$here/mechanism.py" "$here/points.txt" "$here/seed1" off admit >"$here/seed1/mechanism.md"
for s in 2 3; do
  python3 "$here/compare.py" "$here/points-seeds.txt" "$here/seed$s" off admit >"$here/seed$s/table.md"
  python3 "$here/mechanism.py" "$here/points-seeds.txt" "$here/seed$s" off admit >"$here/seed$s/mechanism.md"
done
python3 "$here/seeds.py" "$here/points-seeds.txt" off admit >"$here/seeds.md"
# infercept-multi's sustained rate with make bench-policies' flags
"$here/sustained.sh" /tmp/hr-a611107 "$here/sustained" admit off lamps
# mixed's sustained rate with make bench-policies' flags, pitstop with the rule
/tmp/hr-a611107 bench --sustained --workload mixed --executor sim --profile a100-80g-llama3-8b --policies pitstop \
  --pitstop-hostroom admit --duration 1800 --sustained-seeds 3 --sustained-start 0.5 --sustained-resolution 0.1 \
  --sustained-p99 15.3 --parallel 1 --json "$here/sustained/mx-admit.json" --out "$here/sustained/mx-admit"
