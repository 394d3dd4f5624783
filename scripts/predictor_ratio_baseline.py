#!/usr/bin/env python3
"""A non-parametric model of the ratio to the program's mean (issue 21, lead 3).

For every segment after a program's first, predicts the program's mean
output so far times the median ratio (actual / program mean) of the last
200 finished segments that resumed after the same tool (of all segments
while that tool has fewer than 8), learnt in trace order (prequential),
against the plain program mean (the history baseline). A cheap test of
whether the ratio carries signal before building the retrained model the
lead asks for.

  scripts/predictor_ratio_baseline.py predictor/data/traces/*.jsonl.gz
"""
import collections
import gzip
import statistics
import sys


def main(paths):
    for path in paths:
        with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
            recs = [__import__("json").loads(line) for line in f if line.strip()]
        ratios = collections.defaultdict(list)
        err_hist = err_ratio = n = 0
        for r in recs:
            h = r.get("input", {}).get("history") or {}
            if not h.get("calls"):
                continue
            actual, mean = r["pre_tool_output_tokens"], h["mean_output_tokens"]
            tool = r["input"].get("last_tool") or "\x00user"
            rs = ratios[tool] if len(ratios[tool]) >= 8 else ratios[None]
            ratio = statistics.median(rs[-200:]) if rs else 1.0
            err_hist += abs(mean - actual)
            err_ratio += abs(mean * ratio - actual)
            n += 1
            for k in (tool, None):
                ratios[k].append(actual / max(mean, 1))
        if n:
            print(f"{path}: {n} later segments, MAE program mean {err_hist / n:.1f}, mean x ratio by last tool {err_ratio / n:.1f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: predictor_ratio_baseline.py TRACE.jsonl[.gz] ...")
    main(sys.argv[1:])
