#!/usr/bin/env python3
"""What a search tree's turns know before they run, and how far each
feature set lets a length prediction go on the trace's second half.

ToolBench's search trees (toolbench-gpt35-search) miss issue 21's
after-learning bar (MAE at most 0.9x the history baseline's, Acc-5 at
least 30%). Session 13 measured the hindsight ceiling of the features the
trace already names (program, depth, last tool): 50.9 tokens at best,
above the bar's 47.8. This adds what a search tree knows before each turn,
all derived from the trace's records in order (the converter writes a
program's turns in the order the depth-first search generated them, each
with its own branch's history), never from a record's own output or tool:

  depth        the branch's turns so far (history.calls)
  retry        the turn goes back to an earlier point of its conversation:
               its branch holds no more turns than the previous turn's did
               (a sibling of an earlier turn; predictor.DeriveRetries)
  sibling      how many earlier turns share its parent (the parent being
               the latest earlier turn one level up, depth first)
  parent       the parent turn's output (history.last_output_tokens)
  prev sibling the latest earlier sibling's output
  prev turn    the output of the turn generated just before (any branch)
  same result  the output that followed the same tool result before
  result       the last message's length (log buckets) and whether it is an
               error or an empty response
  tools        the number of tools offered

For each feature set (always with the program, as a deployment learns per
program, and without), the hindsight ceiling as session 13 computed it:
the median and the densest +-5-token window of the second half's own
lengths per class, scored on classes of two or more. Then a few online
predictors (prequential: each turn predicted from earlier turns only).

  scripts/predictor_tree_ceiling.py predictor/data/traces/toolbench-gpt35-search.jsonl.gz
"""
import collections
import gzip
import json
import statistics
import sys


def load(path):
    with gzip.open(path, "rt") as f:
        recs = [json.loads(line) for line in f if line.strip()]
    rows, state = [], {}
    for r in recs:
        h = r["input"].get("history") or {}
        st = state.get(r["program"])
        if st is None or r["segment"] == 0:
            st = state[r["program"]] = {"turns": [], "seen": {}}
        turns = st["turns"]
        d = h.get("calls", 0)
        parent = None
        if d > 0:
            parent = next((j for j in range(len(turns) - 1, -1, -1) if turns[j]["depth"] == d - 1), None)
        sibs = [t for t in turns if t["depth"] == d and t["parent"] == parent]
        msg = r["input"].get("last_message", "")
        key = (r["input"].get("last_tool", ""), msg)
        t = {
            "program": r["program"], "y": r["pre_tool_output_tokens"], "depth": d, "parent": parent,
            "hist": h.get("mean_output_tokens") if d > 0 else None,
            "retry": bool(turns) and 0 < d <= turns[-1]["depth"],
            "sibling": min(len(sibs), 3),
            "parent_y": h.get("last_output_tokens") if d > 0 else None,
            "prev_sib_y": sibs[-1]["y"] if sibs else None,
            "prev_y": turns[-1]["y"] if turns else None,
            "same_y": st["seen"].get(key) if d > 0 else None,
            "last_tool": r["input"].get("last_tool", ""),
            "result_len": len(msg),
            "result_err": ('"error": ""' not in msg and '"error"' in msg, '"response": ""' in msg or '"response": "[]"' in msg),
            "tools": len(r["input"].get("tool_names") or []),
        }
        turns.append(t)
        st["seen"][key] = t["y"]
        rows.append(t)
    return rows


def bucket(v, edges=(10, 25, 50, 100, 200, 400)):
    if v is None:
        return None
    return next((e for e in edges if v <= e), "more")


FEATURES = {
    "program": lambda t: t["program"],
    "depth": lambda t: t["depth"],
    "retry": lambda t: t["retry"],
    "sibling": lambda t: t["sibling"],
    "last tool": lambda t: t["last_tool"],
    "result length": lambda t: bucket(t["result_len"], (100, 300, 1000, 3000)),
    "result error/empty": lambda t: t["result_err"],
    "parent": lambda t: bucket(t["parent_y"]),
    "prev sibling": lambda t: bucket(t["prev_sib_y"]),
    "prev turn": lambda t: bucket(t["prev_y"]),
    "same result": lambda t: bucket(t["same_y"]),
    "tools": lambda t: t["tools"],
}

SETS = [[], ["depth"], ["last tool"], ["last tool", "depth"]] + [[k] for k in FEATURES if k not in ("program", "depth", "last tool")] + [
    ["last tool", "retry"], ["last tool", "sibling"], ["last tool", "depth", "retry"], ["last tool", "prev sibling"],
    ["last tool", "same result"], ["last tool", "parent"], ["last tool", "result length"], ["last tool", "result error/empty"],
    ["last tool", "result length", "retry"], ["retry", "parent"], ["retry", "prev sibling"]]


def mae(ps):
    return sum(abs(p - y) for p, y in ps) / len(ps)


def acc5(ps):
    return sum(abs(p - y) <= 5 for p, y in ps) / len(ps)


def densest(vals):
    med = statistics.median(vals)
    return max(sorted(set(vals)), key=lambda c: (sum(abs(v - c) <= 5 for v in vals), -abs(c - med)))


def ceiling(second, keys):
    def key(t):
        return tuple(FEATURES[k](t) for k in keys)
    groups = collections.defaultdict(list)
    for t in second:
        groups[key(t)].append(t["y"])
    scored = [t for t in second if len(groups[key(t)]) > 1]
    if not scored:
        return 0, 0, float("nan"), float("nan")
    med = [(statistics.median(groups[key(t)]), t["y"]) for t in scored]
    win = [(densest(groups[key(t)]), t["y"]) for t in scored]
    return len(scored), sum(len(v) > 1 for v in groups.values()), mae(med), acc5(win)


def online(rows, half, name, predict, median):
    pts, seen = [], collections.defaultdict(list)
    for i, t in enumerate(rows):
        p = predict(t, seen[t["program"]])
        if p is None:
            p = t["hist"] if t["hist"] is not None else median
        if i >= half:
            pts.append((p, t["y"]))
        seen[t["program"]].append(t)
    print(f"| {name} | {mae(pts):.1f} | {acc5(pts):.1%} |")


def kind_stat(stat, kind):
    def p(t, earlier):
        # Since the program's last restart (a turn with no history).
        start = max([i for i, u in enumerate(earlier) if u["depth"] == 0] + [0])
        pool = earlier[start:] if t["depth"] > 0 else []
        same = [u["y"] for u in pool if not kind or u["retry"] == t["retry"]]
        if not pool:
            return None
        return stat(same or [u["y"] for u in pool])
    return p


def report(path):
    rows = load(path)
    half = len(rows) // 2
    second = rows[half:]
    hist = [(t["hist"], t["y"]) for t in second if t["hist"] is not None]
    print(f"{path}: {len(rows)} turns, second half {len(second)} in {len({t['program'] for t in second})} programs")
    print(f"history (the branch's mean) on the {len(hist)} with one: MAE {mae(hist):.1f} (0.9x = {0.9 * mae(hist):.1f}), Acc-5 {acc5(hist):.1%}")
    for flag in (False, True):
        ys = [t["y"] for t in rows if t["retry"] == flag]
        if len(ys) < 2:
            print(f"{'retries' if flag else 'continuations'}: {len(ys)} turns")
            continue
        print(f"{'retries' if flag else 'continuations'}: {len(ys)} turns, median {statistics.median(ys):.0f}, quartiles {statistics.quantiles(ys, n=4)}")
    print()
    print("| feature set | with the program: records, classes, median MAE, window Acc-5 | without: records, classes, median MAE, window Acc-5 |")
    print("|---|---|---|")
    ys = [t["y"] for t in second]
    const = (len(second), 1, mae([(statistics.median(ys), y) for y in ys]), acc5([(densest(ys), y) for y in ys]))
    for s in SETS:
        a = ceiling(second, ["program"] + s)
        b = ceiling(second, s) if s else const  # the best constant in hindsight
        print(f"| {', '.join(s) or '(none)'} | {a[0]}, {a[1]}, {a[2]:.1f}, {a[3]:.1%} | {b[0]}, {b[1]}, {b[2]:.1f}, {b[3]:.1%} |")
    print()
    median = statistics.median(t["y"] for t in rows[:half])
    print("| online, second half (first segments: the first half's median) | MAE | Acc-5 |")
    print("|---|---|---|")
    online(rows, half, "history (the branch's mean)", lambda t, e: None, median)
    online(rows, half, "the program's mean since its restart", kind_stat(statistics.mean, False), median)
    online(rows, half, "the program's mean per kind (retry or continuation)", kind_stat(statistics.mean, True), median)
    online(rows, half, "the program's median per kind", kind_stat(statistics.median, True), median)
    online(rows, half, "the previous sibling's output", lambda t, e: t["prev_sib_y"], median)
    online(rows, half, "the parent's output", lambda t, e: t["parent_y"], median)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: predictor_tree_ceiling.py TRACE.jsonl.gz [...]")
    for path in sys.argv[1:]:
        report(path)


if __name__ == "__main__":
    main()
