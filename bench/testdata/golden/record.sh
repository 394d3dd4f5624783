#!/usr/bin/env bash
# Records the bench golden reports that TestGoldenReports compares against, with a
# pitstop binary built from the tree whose numbers are the reference, with the
# oracle predictor and each policy's own engine features (TestGoldenReports replays
# without a predictor, the truth, and each policy as policy.New builds it: --engine-features
# paper; the binary's default became same after the goldens were first recorded).
# Usage (from the repository root):
#   go build -o /tmp/pitstop ./cmd/pitstop
#   bench/testdata/golden/record.sh /tmp/pitstop quick   # or full; NAME... records only those
set -euo pipefail
bin=$(realpath "$1")
set=$2
shift 2
cd "$(dirname "$0")/../.." # bench/: profile paths in the lists are relative to it
policies=$("$bin" bench --help | sed -n 's/^Policies: *//p' | tr -d ' ')
mkdir -p "testdata/golden/$set"
grep -v '^#' "testdata/golden/$set.txt" | while read -r name flags; do
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
		continue
	fi
	echo "== $name: bench $flags" >&2
	# shellcheck disable=SC2086 # flags are words
	"$bin" bench --executor sim --seed 1 --predictor oracle --engine-features paper --policies "$policies" $flags \
		--json "testdata/golden/$set/$name.json" >/dev/null 2>&1
done
