#!/usr/bin/env bash
# The steady-state cluster runs of docs/results-cluster.md (issue 13): sustained rate per
# policy/balancer on simulated replicas of a100-80g-llama3-8b by bench --sustained.
# Usage: scripts/cluster_sustained.sh STEP [OUT_DIR]
#   policy plas: chat, mcts, mixed, scale, scale-rest, scale-rest-8, scale-rr-32,
#   speed; added 2026-11-27: mcts-23, mixed-23 (seeds 2-3), mcts-rest, mixed-rest (the four
#   other balancers, seed 1; BALANCERS overrides mcts-rest's), scale-rest-16, scale-rest-32;
#   policies atlas and pitstop: pol-chat-1, pol-chat-23, pol-chat-base, pol-chat-base-1,
#   pol-chat-base-23, pol-mcts-1, pol-mcts-23, pol-mixed-1, pol-mixed-23, pol-mcts-at, pol-mixed-at,
#   pol-mcts-at23, pol-mixed-at23, pol-mcts-rest, pol-mixed-rest (session 8);
#   session 8 also: chat-1, chat-23 (six balancers, POLICIES), scale-23-2, scale-23-8, scale-23-16;
#   plots: latency against rate per balancer from docs/data/cluster/*.json into docs/img/cluster.
#   POLICIES and SEED set the policies and first seed of the plas steps; PARALLEL the trials
#   run at once (default 2; 1 when the machine is busy: results do not change, wall time does); POL the policies of
#   pol-mcts-1/23/at23 and pol-mixed-1/23/at23 (default atlas,pitstop; the JSON is named after them).
# Heavy: run one step at a time, under nice, on a quiet machine if you have one.
set -euo pipefail
step=${1:?usage: $0 chat|mcts|mixed|scale|speed [out_dir]}
out=${2:-out/cluster}
mkdir -p "$out"
pitstop=${PITSTOP:-pitstop}
all=round-robin,least-used,least-tokens,prefix,autellix,pitstop
policies=${POLICIES:-plas}
seed=${SEED:-1}
parallel=${PARALLEL:-2}
sustained() { # workload replicas balancers seeds start resolution name [extra flags]
	nice -n 10 "$pitstop" bench --sustained --workload "$1" --replicas "$2" --profile a100-80g-llama3-8b \
		--policies "$policies" --seed "$seed" --balancers "$3" --duration 1800 --sustained-seeds "$4" --sustained-start "$5" \
		--sustained-resolution "$6" --parallel "$parallel" --json "$out/$7.json" --out "$out" "${@:8}"
}
case $step in
chat) sustained chat 4 "$all" 3 1.5 0.1 chat-plas ;;
mcts) sustained mcts 4 autellix,pitstop 1 1.5 0.1 mcts-plas ;;
mixed) sustained mixed 4 autellix,pitstop 1 1.5 0.1 mixed-plas ;;
# Added 2026-11-27: seeds 2-3 of mcts and mixed, and the four other balancers on seed 1, on
# the same grid (start 1.5, resolution 0.1) as the two steps above.
mcts-23) seed=2 sustained mcts 4 autellix,pitstop 2 1.5 0.1 mcts-plas-s23 ;;
mixed-23) seed=2 sustained mixed 4 autellix,pitstop 2 1.5 0.1 mixed-plas-s23 ;;
mcts-rest) sustained mcts 4 "${BALANCERS:-round-robin,prefix}" 1 1.5 0.1 mcts-plas-rest ;; # least-used is autellix on mcts (every call <= 2,048 tokens); least-tokens not run (time)
mixed-rest) sustained mixed 4 round-robin,least-used,least-tokens,prefix 1 1.5 0.1 mixed-plas-rest ;;
scale) # one replica: every balancer places alike
	sustained chat 1 pitstop 1 0.5 0.025 scale-1
	sustained chat 2 round-robin,autellix,pitstop 1 1 0.05 scale-2
	sustained chat 8 round-robin,autellix,pitstop 1 4 0.25 scale-8
	sustained chat 16 autellix,pitstop,round-robin 1 8 0.5 scale-16
	sustained chat 32 autellix,pitstop 1 16 1 scale-32 ;;
scale-rest) # the other balancers at 2 replicas (added 2026-11-27)
	sustained chat 2 least-used,least-tokens,prefix 1 1 0.05 scale-2-rest ;;
scale-rest-8) sustained chat 8 least-used,least-tokens,prefix 1 4 0.25 scale-8-rest ;;
scale-rr-32) sustained chat 32 round-robin 1 8 1 scale-32-rr ;;
scale-rest-16) sustained chat 16 least-used,least-tokens,prefix 1 8 0.5 scale-16-rest ;;
scale-rest-32) sustained chat 32 least-used,least-tokens,prefix 1 8 1 scale-32-rest ;;
# Added 2026-11-27 (session 8): chat again with the binary that reports p95, all six
# balancers, seed 1 and seeds 2-3 apart, under POLICIES (plas or pitstop; the JSON is named after it).
chat-1) sustained chat 4 "$all" 1 1.5 0.1 "chat-$policies-all-s1" ;;
chat-23) seed=2 sustained chat 4 "$all" 2 1.5 0.1 "chat-$policies-all-s23" ;;
# Seeds 2-3 of the replica sweep (session 8) for round-robin, autellix and pitstop, on the
# grids of the scale step (4 replicas: chat-23, the same --seed 2 program pool).
scale-23-2) seed=2 sustained chat 2 round-robin,autellix,pitstop 2 1 0.05 scale-2-s23 ;;
scale-23-8) seed=2 sustained chat 8 round-robin,autellix,pitstop 2 4 0.25 scale-8-s23 ;;
scale-23-16) seed=2 sustained chat 16 autellix,pitstop,round-robin 2 8 0.5 scale-16-s23 ;;
# Policies atlas and pitstop. On chat (single-threaded programs) atlas is plas (NewATLAS's
# doc; the chat step's trials show it), so chat runs the pitstop policy only. mcts and mixed
# start at 1 and 1.5 with resolution 0.2 (a trial there costs 4-8x a chat trial).
pol-chat-1) policies=pitstop sustained chat 4 autellix,pitstop 1 1.5 0.1 chat-pitstop-s1 ;;
pol-chat-23) policies=pitstop seed=2 sustained chat 4 autellix,pitstop 2 1.5 0.1 chat-pitstop-s23 ;;
pol-chat-base) policies=pitstop sustained chat 4 round-robin,least-used 3 1.5 0.1 chat-pitstop-base ;;
pol-chat-base-1) policies=pitstop sustained chat 4 round-robin,least-used 1 1.5 0.1 chat-pitstop-base-s1 ;;
pol-chat-base-23) policies=pitstop seed=2 sustained chat 4 round-robin,least-used 2 1.5 0.1 chat-pitstop-base-s23 ;;
# One rate each (start = max = resolution: a single trial per series), both policies: what
# fitted the time when an mcts trial took 9-10 min wall here.
pol-mcts-at) policies=atlas,pitstop sustained mcts 4 autellix,pitstop 1 1 1 mcts-atlas-pitstop-at1 --sustained-max 1 ;;
pol-mixed-at) policies=atlas,pitstop sustained mixed 4 autellix,pitstop 1 2 2 mixed-atlas-pitstop-at2 --sustained-max 2 ;;
pol-mcts-at23) policies=${POL:-atlas,pitstop} seed=2 sustained mcts 4 autellix,pitstop 2 1 1 "mcts-${POL:-atlas,pitstop}-at1-s23" --sustained-max 1 ;;
pol-mixed-at23) policies=${POL:-atlas,pitstop} seed=2 sustained mixed 4 autellix,pitstop 2 2 2 "mixed-${POL:-atlas,pitstop}-at2-s23" --sustained-max 2 ;;
pol-mcts-1) policies=${POL:-atlas,pitstop} sustained mcts 4 autellix,pitstop 1 1 0.2 "mcts-$(tr , - <<<"${POL:-atlas,pitstop}")-s1" ;;
pol-mixed-1) policies=${POL:-atlas,pitstop} sustained mixed 4 autellix,pitstop 1 1.5 0.2 "mixed-$(tr , - <<<"${POL:-atlas,pitstop}")-s1" ;;
# Added 2026-11-27 (session 8): the other balancers under atlas or the pitstop policy (POL, one
# policy; default pitstop), seed 1, on pol-mcts-1's and pol-mixed-1's grids; least-used is
# autellix on mcts. BALANCERS overrides the list, NAME the JSON's last word (default rest).
pol-mcts-rest) policies=${POL:-pitstop} sustained mcts 4 "${BALANCERS:-round-robin,least-tokens,prefix}" 1 1 0.2 "mcts-${POL:-pitstop}-${NAME:-rest}" ;;
pol-mixed-rest) policies=${POL:-pitstop} sustained mixed 4 "${BALANCERS:-round-robin,least-used,least-tokens,prefix}" 1 1.5 0.2 "mixed-${POL:-pitstop}-${NAME:-rest}" ;;
pol-mcts-23) policies=${POL:-atlas,pitstop} seed=2 sustained mcts 4 autellix,pitstop 2 1 0.2 "mcts-${POL:-atlas,pitstop}-s23" ;;
pol-mixed-23) policies=${POL:-atlas,pitstop} seed=2 sustained mixed 4 autellix,pitstop 2 1.5 0.2 "mixed-${POL:-atlas,pitstop}-s23" ;;
plots) # latency against rate per series, from each saved report's trials, into docs/img/cluster
	tmp=$(mktemp -d)
	for js in docs/data/cluster/*.json; do
		stem=$(basename "$js" .json)
		case $stem in *-at[0-9]*) continue ;; esac # one rate per series: nothing to draw
		"$pitstop" bench --sustained --sustained-from "$js" --out "$tmp/$stem" >/dev/null
		plots=("$tmp/$stem"/*-sustained-e2e_mean.png "$tmp/$stem"/*-sustained-e2e_p99.png)
		if grep -q '"e2e_p95_s"' "$js"; then # reports written before p95 existed would plot zeros
			plots+=("$tmp/$stem"/*-sustained-e2e_p95.png)
		fi
		for f in "${plots[@]}"; do
			mv "$f" "docs/img/cluster/$stem-${f##*-sustained-}"
		done
	done
	rm -r "$tmp" ;;
speed)
	rate=${RATE:-4.5} # pitstop's 8-replica sustained chat rate (Show 2)
	time nice -n 10 "$pitstop" bench --workload chat --replicas 8 --profile a100-80g-llama3-8b --policies plas \
		--balancers pitstop --rates "$rate" --duration 1800 --json "$out/speed-8.json" ;;
*) echo "unknown step $step (valid: chat, mcts, mixed, mcts-23, mixed-23, mcts-rest, mixed-rest, scale-rest-16, scale-rest-32, scale, scale-rest, scale-rest-8, scale-rr-32, speed, pol-chat-base-23, pol-chat-1, pol-chat-23, pol-chat-base, pol-chat-base-1, pol-mcts-1, pol-mixed-1, pol-mcts-23, pol-mixed-23, pol-mcts-at, pol-mixed-at, pol-mcts-at23, pol-mixed-at23, plots)" >&2; exit 2 ;;
esac
