#!/usr/bin/env bash
# Show 4 of docs/results-router.md: the router's own time per call at a fixed rate on loopback.
# Builds pitstop for each git ref named in the configurations (and routerload from the working
# tree: the same load generator for all), then runs the overhead measurement RUNS times per
# configuration, alternating them run by run, one line per run.
#   scripts/router_overhead.sh [-n RUNS] [-r RATE] [-s SECONDS] [-w WARMUP] CONFIG...
# -w WARMUP: seconds of the same load before each run's measured SECONDS, not measured (default 0,
# as before 2026-11-27 14:40 UTC: a run's first half second, connections opening and the router's
# heap growing, holds 2.8x its share of the slowest calls; docs/results-router.md §4, session 11).
# CONFIG is REF with optional suffixes; REF is a git ref, . (the working tree), or a directory
# holding a built pitstop:
#   +pin     the router on CPU 0 (taskset -c 0: Go then runs it with GOMAXPROCS 1), the load
#            generator and its fake backend on CPU 1
#   +gogc=N  the router runs with GOGC=N (off: no collection in a run of a few seconds; the
#            heap grows by the garbage of every call)
#   +memlimit=M  the router runs with GOMEMLIMIT=M (e.g. 64MiB; with +gogc=off: no collection
#            until the heap reaches M, then the collector keeps it there, pages reused)
#   +loadgogc=off  routerload (the client and the fake backend, not the router) runs with GOGC=off
#            and GOMEMLIMIT=1GiB: no collection of its own in a 10 s run, which would otherwise
#            hold up the calls in flight during its ~25 mark phases (scripts/tracetail)
#   +procs=N the router runs with GOMAXPROCS=N (unpinned: fewer threads to wake, on any core)
#   +anonttl=D  the router runs with --anonymous-program-ttl D (default 30s: the rows of calls
#            without a program id, most of the router's live heap, which each collection marks)
#   +trace   with OUT set: the router's execution trace (serve --exectrace, or the proxy's
#            -exectrace) as OUT/RUN-CONFIG.trace, routerload's (the client's and the fake
#            backend's side) as OUT/RUN-CONFIG.load.trace; scripts/tracetail lines the run's
#            slowest calls up with either (tracing costs CPU: compare traced runs with traced)
#   +transport=T  the backend option transport=T (inline or nethttp; refs from before
#            2026-11-27 04:00 UTC know neither and use net/http's)
# or "direct" (+pin, +loadgogc=off allowed): no router, the calls go straight to the fake backend: the floor
# (the client's and the fake backend's HTTP work and two loopback round trips);
# or "proxy" (+pin, +gogc=N, +memlimit=M, +procs=N, +trace, +loadgogc=off allowed): a bare net/http reverse proxy (httputil.ReverseProxy,
# routerload -proxy) in the router's place: the floor of any router on net/http's server and
# client (a second round trip, no decode, no pick, no re-encode).
#   e.g. scripts/router_overhead.sh -n 5 main . main+pin .+pin direct
# Columns: p50, p99, p99.9 and max of the overhead (the client's time less the fake backend's
# handler's), the achieved rate, the router's CPU (% of one core over the load), its collections
# during the load (GODEBUG=gctrace=1 lines) and its live heap after the last one (MB: one that
# grows with -s keeps something per call), failed calls, the 100 ms windows the slowest 1% of
# the calls were sent in (tail_win: a few for a tail of bursts such as a collection, about as
# many as those calls, 100 at 10 s, for one spread over the run), the router's minor page faults
# per call (flt/call: a heap that gives its pages back to the kernel and touches them again pays
# a zeroed page each), the time its threads waited in the kernel's run queue for a CPU over the
# load (rq_ms, from /proc/PID/task/*/schedstat: a core held by another process), the same for
# routerload itself (lrq_ms: the client and the fake backend), and the 1-minute
# load average before the run. Needs go (unless ROUTERLOAD names a built routerload and every REF is a directory),
# taskset for +pin. BASEPORT (default 18400) and BASEPORT+1 must be free. With OUT=DIR each run's
# full result (JSON, with the first errors and the slowest 1% of the calls: when each was sent,
# its overhead and its two ways) is kept as DIR/RUN-CONFIG.json, and the router's log (its
# collections, GODEBUG=gctrace=1) as DIR/RUN-CONFIG.log.
set -euo pipefail
RUNS=5 RATE=1000 SECONDS_=10 WARMUP=0
while getopts "n:r:s:w:" o; do
	case $o in
	n) RUNS=$OPTARG ;;
	r) RATE=$OPTARG ;;
	s) SECONDS_=$OPTARG ;;
	w) WARMUP=$OPTARG ;;
	*) echo "usage: $0 [-n RUNS] [-r RATE] [-s SECONDS] [-w WARMUP] CONFIG..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
	echo "usage: $0 [-n RUNS] [-r RATE] [-s SECONDS] [-w WARMUP] CONFIG...   (CONFIG: REF[+pin][+gogc=N][+memlimit=M][+procs=N][+anonttl=D][+transport=T][+trace][+loadgogc=off], direct[+pin][+loadgogc=off] or proxy[+pin][+gogc=N][+memlimit=M][+procs=N][+trace][+loadgogc=off])" >&2
	exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/router_overhead.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
R=${BASEPORT:-18400} F=$((${BASEPORT:-18400} + 1))

# bin REF: the directory holding REF's pitstop, built once.
bin() {
	local ref=$1 d
	if [ -x "$ref/pitstop" ]; then
		echo "$ref"
		return
	fi
	d="$WORK/bin-$(printf %s "$ref" | tr -c 'A-Za-z0-9._-' _)"
	if [ ! -x "$d/pitstop" ]; then
		if [ "$ref" = . ]; then
			(cd "$ROOT" && go build -o "$d/pitstop" ./cmd/pitstop)
		else
			mkdir -p "$d/src"
			git -C "$ROOT" archive "$ref" | tar -x -C "$d/src"
			(cd "$d/src" && go build -o "$d/pitstop" ./cmd/pitstop)
		fi
	fi
	echo "$d"
}

echo "building..." >&2
LOAD=${ROUTERLOAD:-}
if [ -z "$LOAD" ]; then
	(cd "$ROOT" && go build -o "$WORK/routerload" ./examples/routerload)
	LOAD=$WORK/routerload
fi
for c in "$@"; do
	ref=${c%%+*}
	case "$ref" in direct | proxy) ;; *) bin "$ref" >/dev/null ;; esac
done

printf '%-4s %-24s %6s %8s %8s %8s %8s %7s %7s %4s %7s %6s %8s %9s %7s %7s\n' run config load p50_ms p99_ms p999_ms max_ms rate/s cpu_pct gcs live_mb failed tail_win flt/call rq_ms lrq_ms
for run in $(seq 1 "$RUNS"); do
	for c in "$@"; do
		ref=${c%%+*} pin="" gogc="" transport="" procs="" anonttl="" tr="" memlimit="" loadenv=()
		case "+$c+" in *+pin+*) pin=1 ;; esac
		case "+$c+" in *+trace+*) [ -n "${OUT:-}" ] && tr="$OUT/$run-$(printf %s "$c" | tr -c 'A-Za-z0-9._=-' _)" ;; esac
		case "$c" in *+gogc=*) gogc=${c#*+gogc=} gogc=${gogc%%+*} ;; esac
		case "+$c+" in *+loadgogc=off+*) loadenv=(GOGC=off GOMEMLIMIT=1GiB) ;; esac
		case "$c" in *+memlimit=*) memlimit=${c#*+memlimit=} memlimit=${memlimit%%+*} ;; esac
		case "$c" in *+procs=*) procs=${c#*+procs=} procs=${procs%%+*} ;; esac
		case "$c" in *+transport=*) transport=${c#*+transport=} transport=${transport%%+*} ;; esac
		case "$c" in *+anonttl=*) anonttl=${c#*+anonttl=} anonttl=${anonttl%%+*} ;; esac
		load=$(cut -d' ' -f1 /proc/loadavg)
		rpin=() lpin=()
		if [ -n "$pin" ]; then rpin=(taskset -c 0) lpin=(taskset -c 1); fi
		args=(-router "http://127.0.0.1:$R" -overhead-backend "127.0.0.1:$F" -rate "$RATE" -seconds "$SECONDS_" -warmup "$WARMUP" -line)
		if [ -n "${OUT:-}" ]; then
			mkdir -p "$OUT"
			args+=(-json "$OUT/$run-$(printf %s "$c" | tr -c 'A-Za-z0-9._=-' _).json")
		fi
		if [ -n "$tr" ]; then args+=(-exectrace "$tr.load.trace"); fi
		rpid="" gcs=- live=-
		: >"$WORK/router.log"
		if [ "$ref" = direct ]; then
			args+=(-overhead-direct)
		else
			if [ "$ref" = proxy ]; then
				env ${gogc:+GOGC=$gogc} ${memlimit:+GOMEMLIMIT=$memlimit} ${procs:+GOMAXPROCS=$procs} GODEBUG=gctrace=1 "${rpin[@]}" "$LOAD" -proxy "127.0.0.1:$R" -proxy-to "http://127.0.0.1:$F" ${tr:+-exectrace "$tr.trace"} >"$WORK/router.log" 2>&1 &
			else
				d=$(bin "$ref")
				env ${gogc:+GOGC=$gogc} ${memlimit:+GOMEMLIMIT=$memlimit} ${procs:+GOMAXPROCS=$procs} GODEBUG=gctrace=1 "${rpin[@]}" "$d/pitstop" serve --addr "127.0.0.1:$R" \
					--backend "http://127.0.0.1:$F,max-inflight=1024${transport:+,transport=$transport}" --health-interval 500ms \
					${anonttl:+--anonymous-program-ttl "$anonttl"} ${tr:+--exectrace "$tr.trace"} >"$WORK/router.log" 2>&1 &
			fi
			rpid=$!
			for _ in $(seq 50); do
				(exec 3<>"/dev/tcp/127.0.0.1/$R") 2>/dev/null && break
				sleep 0.1
			done
			args+=(-router-pid "$rpid")
		fi
		gc0=$(grep -c '^gc ' "$WORK/router.log" || true)
		res=$(env "${loadenv[@]}" "${lpin[@]}" "$LOAD" "${args[@]}" 2>"$WORK/load.log") || true
		if [ -n "$rpid" ]; then
			gcs=$(($(grep -c '^gc ' "$WORK/router.log" || true) - gc0))
			# the live heap after the last collection ("gc N ... 12->13->4 MB": 4)
			live=$(grep '^gc ' "$WORK/router.log" | tail -1 | sed -n 's/.* [0-9]*->[0-9]*->\([0-9]*\) MB.*/\1/p' || true)
			live=${live:--}
			kill "$rpid" 2>/dev/null || true
			wait "$rpid" 2>/dev/null || true
			if [ -n "${OUT:-}" ]; then
				cp "$WORK/router.log" "$OUT/$run-$(printf %s "$c" | tr -c 'A-Za-z0-9._=-' _).log"
			fi
		fi
		if [ -z "$res" ]; then
			echo "$run $c: routerload failed: $(tail -3 "$WORK/load.log")" >&2
			continue
		fi
		read -r p50 p99 p999 mx rate cpu failed tailwin flt rq lrq <<<"$res"
		printf '%-4s %-24s %6s %8s %8s %8s %8s %7s %7s %4s %7s %6s %8s %9s %7s %7s\n' "$run" "$c" "$load" "$p50" "$p99" "$p999" "$mx" "$rate" "$cpu" "$gcs" "$live" "$failed" "${tailwin:--}" "${flt:--}" "${rq:--}" "${lrq:--}"
	done
done
