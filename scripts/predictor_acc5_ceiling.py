#!/usr/bin/env python3
"""The Acc-5 ceiling of conditional windows on a trace, prequentially.

Acc-5 counts a prediction within +-5 tokens of the actual length, so the
point that maximises it is the centre of the densest 11-token window of the
predictive distribution (a mode), not the median. This replays a trace in
order (as `pitstop predictor eval --online` does) and, for each record,
predicts the centre of the densest window of the lengths already seen in the
record's class, then adds the record: what the best conditional window gets
from the features the predictor has, known before the segment (the tool
whose result the segment reads, the position in the program, the previous
segment's length, the program's own earlier lengths). "hindsight" is the
densest window per class over the whole trace, counted on the same records:
an upper bound no online predictor of that class reaches.

  scripts/predictor_acc5_ceiling.py predictor/data/traces/mini-swe-agent-deepseek.jsonl.gz [...]

Prints, per trace and class, Acc-5 over all records and over the second
half (the records after the first half, as eval --online's "second half").
"""
import collections
import gzip
import json
import math
import sys

HALF_WIDTH = 5  # Acc-5: |predicted - actual| <= 5


class Windows:
    """Counts of lengths in every 11-token window, with the densest so far."""

    def __init__(self):
        self.count = collections.Counter()
        self.n = 0
        self.best, self.best_count = None, 0

    def add(self, x):
        self.n += 1
        for c in range(x - HALF_WIDTH, x + HALF_WIDTH + 1):
            self.count[c] += 1
            if self.count[c] > self.best_count:
                self.best, self.best_count = c, self.count[c]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def bucket(n):
    return -1 if n is None else int(math.log2(max(n, 1)))


def keys(rec):
    """The classes a record falls in, by name: only what is known before it."""
    inp = rec.get("input", {})
    hist = inp.get("history") or {}
    last = inp.get("last_tool", "") or ("user" if hist.get("calls") else "")
    pos = min(rec.get("segment", 0), 5)
    prev = bucket(hist.get("last_output_tokens")) if hist.get("calls") else None
    return {
        "constant (one window)": (),
        "last tool": (last,),
        "last tool x position": (last, pos),
        "last tool x previous length": (last, prev),
        "last tool x position x previous length": (last, pos, prev),
    }


def replay(recs):
    names = list(keys(recs[0]))
    online = {k: collections.defaultdict(Windows) for k in names}
    hindsight = {k: collections.defaultdict(Windows) for k in names}
    for r in recs:
        for k, key in keys(r).items():
            hindsight[k][key].add(r["pre_tool_output_tokens"])
    half = len(recs) // 2
    hits = {k: [0, 0] for k in names + ["program's own window, else last tool", "hindsight: " + names[-1], "hindsight: last tool"]}
    programs = collections.defaultdict(Windows)

    def score(name, point, actual, i):
        if point is not None and abs(point - actual) <= HALF_WIDTH:
            hits[name][0] += 1
            if i >= half:
                hits[name][1] += 1

    for i, r in enumerate(recs):
        actual = r["pre_tool_output_tokens"]
        ks = keys(r)
        for k, key in ks.items():
            w = online[k][key]
            point = w.best if w.n else online[names[0]][()].best
            score(k, point, actual, i)
        own = programs[r["program"]]
        point = own.best if own.n >= 2 and own.best_count >= 2 else None
        if point is None:
            w = online["last tool"][ks["last tool"]]
            point = w.best if w.n else online[names[0]][()].best
        score("program's own window, else last tool", point, actual, i)
        score("hindsight: last tool", hindsight["last tool"][ks["last tool"]].best, actual, i)
        score("hindsight: " + names[-1], hindsight[names[-1]][ks[names[-1]]].best, actual, i)
        for k, key in ks.items():
            online[k][key].add(actual)
        own.add(actual)
    return hits, len(recs), len(recs) - half


def main(paths):
    for path in paths:
        recs = load(path)
        hits, n, n2 = replay(recs)
        print(f"== {path}: {n} records, second half {n2}")
        for name, (a, b) in hits.items():
            print(f"  {name:45s} Acc-5 {100 * a / n:5.1f}%  second half {100 * b / n2:5.1f}%")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: predictor_acc5_ceiling.py TRACE.jsonl[.gz] ...")
    main(sys.argv[1:])
