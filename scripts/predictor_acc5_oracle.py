#!/usr/bin/env python3
"""What Acc-5 a trace's second half allows, even to predictors that cheat.

eval --online's after-learning bar asks for Acc-5 (within +-5 tokens) of 30%
or more on the second half of a trace's records. On a short trace that bar
may be out of reach of any honest predictor; this measures how far, with
oracles that know more than a deployment can:

- the best constant in hindsight (the centre of the densest 11-token window
  of the second half's own lengths);
- the median, and the densest window, per class of the last tool called,
  computed on the second half itself (in hindsight: a class of one record is
  hit by construction);
- the same per class, prequentially (from the records before each one, as a
  deployment learns), the honest version;
- how many second-half records lie within +-5 tokens of any length seen
  before them (what a predictor that picked the right earlier length every
  time would get).

  scripts/predictor_acc5_oracle.py predictor/data/traces/toolbench-gpt35.jsonl.gz [...]
"""
import collections
import gzip
import json
import statistics
import sys

HALF_WIDTH = 5


def last_tool(r):
    called = r["input"].get("history", {}).get("tools_called") or [""]
    return called[-1]


def densest(values):
    """The centre of the densest +-5 window of values (the lowest on ties)."""
    best, top = 0, -1
    for c in sorted({v + d for v in values for d in range(-HALF_WIDTH, HALF_WIDTH + 1)}):
        n = sum(abs(c - v) <= HALF_WIDTH for v in values)
        if n > top:
            best, top = c, n
    return best


def acc5(pairs):
    return 100 * sum(abs(p - y) <= HALF_WIDTH for p, y in pairs) / len(pairs)


def mae(pairs):
    return sum(abs(p - y) for p, y in pairs) / len(pairs)


def report(path):
    with gzip.open(path, "rt") as f:
        recs = [json.loads(line) for line in f if line.strip()]
    half = len(recs) // 2
    second = recs[half:]
    ys = [r["pre_tool_output_tokens"] for r in second]
    print(f"{path}: {len(recs)} records, second half {len(second)}")
    q = statistics.quantiles(ys, n=4)
    print(f"  second half lengths: min {min(ys)}, quartiles {q[0]:.0f} / {q[1]:.0f} / {q[2]:.0f}, max {max(ys)}")
    firsts = [r["pre_tool_output_tokens"] for r in recs[:half]]
    print(f"  first half median {statistics.median(firsts):.0f}, second half median {statistics.median(ys):.0f}")
    c = densest(ys)
    print(f"  best constant in hindsight ({c}): Acc-5 {acc5([(c, y) for y in ys]):.1f}%")
    groups = collections.defaultdict(list)
    for r in second:
        groups[last_tool(r)].append(r["pre_tool_output_tokens"])
    sizes = sorted((len(v) for v in groups.values()), reverse=True)
    print(f"  last-tool classes in the second half: {len(groups)}, sizes {sizes}")
    med = [(statistics.median(groups[last_tool(r)]), r["pre_tool_output_tokens"]) for r in second]
    win = {k: densest(v) for k, v in groups.items()}
    wpairs = [(win[last_tool(r)], r["pre_tool_output_tokens"]) for r in second]
    print(f"  per class in hindsight: median Acc-5 {acc5(med):.1f}% MAE {mae(med):.1f}; densest window Acc-5 {acc5(wpairs):.1f}%")
    shared = [(p, r) for (p, r), rec in zip(med, second) if len(groups[last_tool(rec)]) > 1]
    print(f"  the same median on the {len(shared)} records of classes of two or more: Acc-5 {acc5(shared):.1f}%")
    seen, everything = collections.defaultdict(list), []
    pm, pw, near = [], [], 0
    for i, r in enumerate(recs):
        y, k = r["pre_tool_output_tokens"], last_tool(r)
        if i >= half:
            v = seen[k] or everything
            pm.append((statistics.median(v), y))
            pw.append((densest(v), y))
            near += any(abs(x - y) <= HALF_WIDTH for x in everything)
        seen[k].append(y)
        everything.append(y)
    print(f"  per class, prequential: median Acc-5 {acc5(pm):.1f}% MAE {mae(pm):.1f}; densest window Acc-5 {acc5(pw):.1f}%")
    print(f"  within +-5 of some earlier length: {near} of {len(second)} ({100 * near / len(second):.1f}%)")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: predictor_acc5_oracle.py TRACE.jsonl.gz [...]")
    for path in sys.argv[1:]:
        report(path)


if __name__ == "__main__":
    main()
