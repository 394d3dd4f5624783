#!/usr/bin/env python3
"""Fan-out replay of a trace file (docs/results-predictor.md, session 15).

Regroups a source trace's conversations (its programs) into orchestrator
programs of the bench `fanout` family's shape (bench/workload/fanout.go,
after Anthropic's multi-agent research system): a lead conversation's
first segment (the plan), then K subagent conversations under the lead's
program id, K lognormal with mean 4 and shape 0.3 in [1, 16], interleaved
in time (each step, one live subagent drawn at random takes its next
segment, as parallel subagents progress), then the lead's remaining
segments (the synthesis continues the plan). Every segment is one call
(a client-side tool loop), so each reads the program's history as it
stands when it starts, as serve's programTable.history gives it.

The records keep every feature of the source but the history and the
segment index (which counts on across the program). The history is
rewritten per rule, as serve would have written it:

  restart  a subagent's first call (no assistant or tool message: it starts
           a conversation) starts the program's history afresh (session 14)
  pooled   the program's history pools every segment (before session 14;
           also the thread-aware rule, under which a conversation the
           program has not opened before pools)
  thread   each conversation reads only its own history (its source
           history) and its own blend (the record names its thread): the
           runtime's per-conversation rule (runtime/conversation.go)

`pitstop predictor eval --online` then replays each file; its replay
restarts a program's blend where the history is empty after the program's
first segment (predictor.Restarts), as serve does.

  scripts/predictor_fanout_replay.py SOURCE.jsonl.gz OUTDIR [--seed N]

A source whose records name argument classes from their tool arguments
(mini-swe) must be given with the classes already derived (read and
written once by predictor.ReadTraces/WriteTraces), since the derivation
reads the previous record of the program, a sibling's once interleaved.
"""
import argparse
import gzip
import json
import math
import os
import random


def observe(h, out, tool):
    """predictor.History.Observe."""
    h = dict(h)
    h.setdefault("tools_called", [])
    n = h.get("calls", 0)
    h["mean_output_tokens"] = (h.get("mean_output_tokens", 0) * n + out) / (n + 1)
    h["last_output_tokens"] = float(out)
    h["calls"] = n + 1
    if tool:
        k = len(h["tools_called"])
        h["mean_tool_call_tokens"] = (h.get("mean_tool_call_tokens", 0) * k + out) / (k + 1)
        h["tools_called"] = h["tools_called"] + [tool]
    else:
        k = h.get("replies", 0)
        h["mean_reply_tokens"] = (h.get("mean_reply_tokens", 0) * k + out) / (k + 1)
        h["replies"] = k + 1
    return h


def clean(h):
    """Drops zero fields, as Go's omitempty does (the reader does not care)."""
    return {k: v for k, v in h.items() if v or k in ("calls", "mean_output_tokens", "last_output_tokens")}


def subagents(r):
    """bench's fanout draw: lognormal mean 4, shape 0.3, in [1, 16]."""
    mu = math.log(4) - 0.3 * 0.3 / 2
    return max(1, min(16, round(r.lognormvariate(mu, 0.3))))


def schedule(convs, r):
    """The fan-out programs: lists of (conversation index, its record)."""
    order = list(range(len(convs)))
    r.shuffle(order)
    progs = []
    while order:
        k = subagents(r)
        group, order = order[:k + 1], order[k + 1:]
        lead, subs = group[0], group[1:]
        steps = [(lead, convs[lead][0])]
        pos = {s: 0 for s in subs}
        while pos:
            s = r.choice(sorted(pos))
            steps.append((s, convs[s][pos[s]]))
            pos[s] += 1
            if pos[s] == len(convs[s]):
                del pos[s]
        steps += [(lead, rec) for rec in convs[lead][1:]]
        progs.append(steps)
    return progs


def write(progs, rule, path, name):
    n = restarts = 0
    with gzip.open(path, "wt") as f:
        for i, steps in enumerate(progs):
            pooled, seen = {"calls": 0, "mean_output_tokens": 0, "last_output_tokens": 0}, set()
            for seg, (conv, rec) in enumerate(steps):
                first = conv not in seen
                seen.add(conv)
                if rule == "restart" and first and seg > 0:
                    pooled = {"calls": 0, "mean_output_tokens": 0, "last_output_tokens": 0}
                out = dict(rec)
                out["input"] = dict(rec["input"])
                if rule != "thread":
                    out["input"]["history"] = clean(pooled)
                else:
                    out["thread"] = rec.get("program", "")
                out["program"] = f"{name}-fanout-{i:04d}"
                out["segment"] = seg
                if seg > 0 and out["input"]["history"].get("calls", 0) == 0:
                    restarts += 1
                f.write(json.dumps(out) + "\n")
                n += 1
                pooled = observe(pooled, rec["pre_tool_output_tokens"], rec.get("tool", ""))
    return n, restarts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    convs, key = {}, []
    with gzip.open(a.source, "rt") as f:
        for line in f:
            rec = json.loads(line)
            p = rec.get("program", "")
            if p not in convs:
                convs[p] = []
                key.append(p)
            convs[p].append(rec)
    # A conversation starts at its segment 0; a source whose program holds
    # several (a tree search's restarts) is kept whole as one conversation.
    progs = schedule([convs[p] for p in key], random.Random(a.seed))
    name = os.path.basename(a.source).split(".")[0]
    os.makedirs(a.outdir, exist_ok=True)
    for rule in ("restart", "pooled", "thread"):
        path = os.path.join(a.outdir, f"{name}.{rule}.jsonl.gz")
        n, rs = write(progs, rule, path, name)
        print(f"{path}: {len(progs)} programs, {n} records, {rs} restart records")


if __name__ == "__main__":
    main()
