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
segment's length, the program's own earlier lengths) and what the content
before it says (session 10): the size of the last message, whether it reads
as a failed tool call, its first word, the argument class of the call whose
result it is (the previous record's tool_args, as predictor.ArgumentClass
reads them) and the kind of the previous segment. "hindsight" is the
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
import re
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


SETUP = {"cd", "pushd", "popd", "export", "source", ".", "set"}


def shell_program(line):
    """predictor.ShellProgram: the program that decides a shell line's duration."""
    first = ""
    for simple in re.split(r"[&|;\n]", line):
        f = simple.split()
        while f and "=" in f[0]:
            f = f[1:]
        if not f:
            continue
        prog = f[0].rsplit("/", 1)[-1]
        first = first or prog
        if prog in SETUP:
            continue
        if prog.startswith("python") and len(f) > 2 and f[1] == "-m":
            return prog + " -m " + f[2]
        return prog
    return first


def argument_class(args):
    """predictor.ArgumentClass (shell programs only: no trace here has URLs)."""
    try:
        m = json.loads(args)
    except (ValueError, TypeError):
        return ""
    if not isinstance(m, dict):
        return ""
    for k in ("command", "cmd", "script"):
        if isinstance(m.get(k), str):
            p = shell_program(m[k])
            if p:
                return "prog:" + p
    return ""


ERROR = re.compile(r"<returncode>\s*[1-9]|^\s*error\b|traceback \(most recent call last\)|\bexception\b", re.I)


def is_error(msg):
    """The last message reads as a failed tool call (a non-zero return code, an
    error prefix, a Python traceback)."""
    return bool(ERROR.search(msg[:2000])) if msg else False


def first_word(msg):
    """The first word of the last message's first non-empty line of output
    (after a mini-swe-agent return-code tag), lower-cased, digits as 0."""
    msg = re.sub(r"^\s*<returncode>.*?</returncode>\s*(<output>)?\s*", "", msg or "", flags=re.S)
    for line in msg.splitlines():
        w = re.findall(r"[A-Za-z_]+|[^\sA-Za-z_0-9]|[0-9]+", line)
        if w:
            return re.sub(r"[0-9]+", "0", w[0].lower())
    return ""


def keys(rec, prev_rec):
    """The classes a record falls in, by name: only what is known before it
    (prev_rec is the program's previous record: its call's arguments are known
    once it has finished)."""
    inp = rec.get("input", {})
    hist = inp.get("history") or {}
    last = inp.get("last_tool", "") or ("user" if hist.get("calls") else "")
    pos = min(rec.get("segment", 0), 5)
    prev = bucket(hist.get("last_output_tokens")) if hist.get("calls") else None
    msg = inp.get("last_message", "")
    size = bucket(len(msg))
    argc = argument_class(prev_rec.get("tool_args", "")) if prev_rec else None
    err = is_error(msg) if last not in ("", "user") else None
    word = first_word(msg) if last not in ("", "user") else None
    prevkind = (prev_rec.get("tool") or "reply") if prev_rec else None
    return {
        "constant (one window)": (),
        "last tool": (last,),
        "last tool x position": (last, pos),
        "last tool x previous length": (last, prev),
        "last tool x position x previous length": (last, pos, prev),
        "last tool x previous length x message size": (last, prev, size),
        "last tool x previous length x error": (last, prev, err),
        "last tool x previous length x first word": (last, prev, word),
        "last tool x previous length x argument class": (last, prev, argc),
        "last tool x previous length x argument class x error": (last, prev, argc, err),
        "last tool x previous length x previous kind": (last, prev, prevkind),
        "last tool x previous length x size x argument class": (last, prev, size, argc),
        "last tool x argument class": (last, argc),
        "last tool x argument class x message size": (last, argc, size),
        "last tool x error": (last, err),
    }


def with_previous(recs):
    """Each record with its program's previous record (None for a first)."""
    last = {}
    out = []
    for r in recs:
        key = (r.get("source"), r.get("program"))
        p = last.get(key) if r.get("segment", 0) > 0 and r.get("program") else None
        out.append((r, p))
        last[key] = r
    return out


def replay(recs):
    pairs = with_previous(recs)
    names = list(keys(*pairs[0]))
    online = {k: collections.defaultdict(Windows) for k in names}
    hindsight = {k: collections.defaultdict(Windows) for k in names}
    for r, p in pairs:
        for k, key in keys(r, p).items():
            hindsight[k][key].add(r["pre_tool_output_tokens"])
    half = len(recs) // 2
    finest = "last tool x position x previous length"
    hits = {k: [0, 0] for k in names + ["program's own window, else last tool", "hindsight: " + finest, "hindsight: last tool"]}
    programs = collections.defaultdict(Windows)

    def score(name, point, actual, i):
        if point is not None and abs(point - actual) <= HALF_WIDTH:
            hits[name][0] += 1
            if i >= half:
                hits[name][1] += 1

    for i, (r, p) in enumerate(pairs):
        actual = r["pre_tool_output_tokens"]
        ks = keys(r, p)
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
        score("hindsight: " + finest, hindsight[finest][ks[finest]].best, actual, i)
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
            print(f"  {name:55s} Acc-5 {100 * a / n:5.1f}%  second half {100 * b / n2:5.1f}%")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: predictor_acc5_ceiling.py TRACE.jsonl[.gz] ...")
    main(sys.argv[1:])
