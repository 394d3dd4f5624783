#!/usr/bin/env python3
"""What MAE a trace's second half allows, even to predictors that cheat.

eval --online's after-learning bar asks for an MAE of at most 0.9x the
history baseline's (the mean output of the segment's own conversation so
far) on the second half of a trace's records. This measures how far that is
from what one number per class can reach when it is chosen knowing the
answers: the median of the second half's own lengths per class (a class of
one record is its own answer, so only classes of two or more are scored),
for classes of what is known before a segment (its program, the tool whose
result it reads, its depth: the segments before it on its conversation).
Beside them, the history baseline on the records where it has a history
(the rest get the training median in eval, which is not in the trace).

  scripts/predictor_mae_oracle.py predictor/data/traces/toolbench-gpt35-search.jsonl.gz [...]
"""
import collections
import gzip
import json
import statistics
import sys


def history(r):
    return r["input"].get("history") or {}


def last_tool(r):
    called = history(r).get("tools_called") or [""]
    return called[-1]


CLASSES = {
    "program": lambda r: r["program"],
    "program, depth": lambda r: (r["program"], history(r).get("calls", 0)),
    "program, last tool": lambda r: (r["program"], last_tool(r)),
    "program, last tool, depth": lambda r: (r["program"], last_tool(r), history(r).get("calls", 0)),
}


def mae(pairs):
    return sum(abs(p - y) for p, y in pairs) / len(pairs)


def report(path):
    with gzip.open(path, "rt") as f:
        recs = [json.loads(line) for line in f if line.strip()]
    second = recs[len(recs) // 2:]
    ys = [r["pre_tool_output_tokens"] for r in second]
    progs = len({r["program"] for r in second})
    print(f"{path}: {len(recs)} records, second half {len(second)} in {progs} programs")
    hist = [(history(r)["mean_output_tokens"], r["pre_tool_output_tokens"]) for r in second if history(r).get("calls", 0) > 0]
    print(f"  history (its conversation's mean) on the {len(hist)} records with one: MAE {mae(hist):.1f}, 0.9x = {0.9 * mae(hist):.1f}")
    c = statistics.median(ys)
    print(f"  best constant in hindsight ({c:.0f}): MAE {mae([(c, y) for y in ys]):.1f}")
    for name, key in CLASSES.items():
        groups = collections.defaultdict(list)
        for r in second:
            groups[key(r)].append(r["pre_tool_output_tokens"])
        pairs = [(statistics.median(groups[key(r)]), r["pre_tool_output_tokens"]) for r in second if len(groups[key(r)]) > 1]
        if not pairs:
            print(f"  median per ({name}): no class of two or more")
            continue
        print(f"  median per ({name}) in hindsight, classes of two or more ({len(pairs)} records, {sum(len(v) > 1 for v in groups.values())} classes): MAE {mae(pairs):.1f}")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: predictor_mae_oracle.py TRACE.jsonl.gz [...]")
    for path in sys.argv[1:]:
        report(path)


if __name__ == "__main__":
    main()
