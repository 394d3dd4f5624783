#!/usr/bin/env bash
# The built-in tiny model's own output-length classifier (models/builtin/tiny-tools/length.onnx).
#   scripts/tiny_length_model.sh train      retrain it on the model's served outputs:
#       900 held-out questions from the tiny model's generator (eval-tiny --seed 77), served by
#       `pitstop serve --trace --predictor history` to bin/agent as 300 programs of 3, then
#       `pitstop predictor train` on the trace (80% of the programs; held-out metrics printed).
#   scripts/tiny_length_model.sh measure [PREDICTOR...]   serve 180 other questions (seed 78) as
#       60 programs of 3 with each --predictor (default: onnx, predictor/data/default.onnx,
#       history) and print the length errors from /metrics.
# Needs bin/pitstop and bin/agent (make build) and ONNX Runtime (scripts/fetch_ort.sh).
set -euo pipefail
OUT=${OUT:-models/builtin/tiny-tools}
PORT=${PORT:-18090}
TMP=$(mktemp -d)
SP=
trap '[ -n "$SP" ] && kill $SP 2>/dev/null; rm -rf "$TMP"' EXIT
export PITSTOP_ORT_LIB=${PITSTOP_ORT_LIB:-$(scripts/fetch_ort.sh | tail -1)}

# serve SEED N PREDICTOR [serve flags...]: N generated questions as programs of 3, one at a time.
serve() {
	local seed=$1 n=$2 pred=$3; shift 3
	bin/pitstop eval-tiny --n "$n" --seed "$seed" --reference 0 --show-failures 0 --json "$TMP/eval.json" > /dev/null
	python3 -c "import json,sys; print('\n'.join(t['user'].replace('|','/').replace('\n',' ') for t in json.load(open(sys.argv[1]))['transcripts']))" "$TMP/eval.json" > "$TMP/questions.txt"
	bin/pitstop serve --addr 127.0.0.1:$PORT --predictor "$pred" "$@" > "$TMP/serve.log" 2>&1 &
	SP=$!
	local -a Q
	mapfile -t Q < "$TMP/questions.txt"
	for ((i = 0; i + 2 < ${#Q[@]}; i += 3)); do
		bin/agent -base-url http://127.0.0.1:$PORT/v1 -wait 60s -program "q$seed-$i" -questions "${Q[i]}|${Q[i+1]}|${Q[i+2]}" > /dev/null || echo "program $i failed" >&2
	done
	curl -s 127.0.0.1:$PORT/metrics > "$TMP/metrics.txt"
	kill $SP; wait $SP 2>/dev/null || true
	SP=
}

case ${1:-train} in
train)
	serve 77 900 history --trace "$TMP/trace.jsonl"
	cp "$TMP/trace.jsonl" "$OUT/length-traces.jsonl"
	bin/pitstop predictor train --traces "$OUT/length-traces.jsonl" --out "$OUT/length.onnx"
	;;
measure)
	shift
	[ $# -gt 0 ] || set -- onnx predictor/data/default.onnx history
	for pred in "$@"; do
		serve 78 180 "$pred"
		python3 - "$pred" "$TMP/metrics.txt" <<'PY'
import re, sys
pred, txt = sys.argv[1], open(sys.argv[2]).read()
def hist(name):
    b = {m.group(1): float(m.group(2)) for m in re.finditer(name + r'_bucket\{[^}]*le="([^"]+)"[^}]*\} (\S+)', txt)}
    s = float(re.search(name + r'_sum\{[^}]*\} (\S+)', txt).group(1))
    c = float(re.search(name + r'_count\{[^}]*\} (\S+)', txt).group(1))
    return b, s, c
b, s, c = hist('pitstop_predictor_length_error_tokens')
_, rs, rc = hist('pitstop_predictor_length_relative_error')
print(f"{pred}: {c:.0f} segments, mean abs. error {s/c:.1f} tokens, within 5/10/20 tokens "
      f"{b['5']/c*100:.0f}% / {b['10']/c*100:.0f}% / {b['20']/c*100:.0f}%, mean relative error {rs/rc:.2f}")
PY
	done
	;;
*) echo "usage: $0 train | measure [PREDICTOR...]" >&2; exit 2 ;;
esac
