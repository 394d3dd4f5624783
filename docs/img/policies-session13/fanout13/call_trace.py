#!/usr/bin/env python3
"""Where a run's call latency goes, from call-trace.patch's dump (session 13).

    call_trace.py TRACE...

Per trace: the calls' mean end-to-end time and its sum split into the waits
from arrival or a tool's return to the next first token, the decode phases
(first token to the pause or the end), and the part of the decode phases
spent out of the batch (runnable with a token to decode, but not in the
iteration: the decode-phase time minus the sum over iterations of the
iteration's duration times its decodes).
"""
import sys
from collections import Counter, defaultdict


def load(path):
    calls = defaultdict(Counter)
    pend, run = {}, {}
    in_batch, prev = 0.0, None
    for line in open(path):
        f = line.split()
        k, t = f[0], float(f[1])
        if k == "I":
            if prev is not None:
                in_batch += (t - prev) * int(f[4])
            prev = t
            continue
        n = f[2]
        c = calls[n]
        if k == "A":
            pend[n], c["arr"] = t, t
        elif k == "R":
            pend[n] = t
        elif k == "T" and n in pend:
            c["wait"] += t - pend.pop(n)
            run[n] = t
        elif k == "P":
            c["dec"] += t - run.pop(n)
        elif k == "F":
            c["dec"] += t - run.pop(n)
            c["e2e"] = t - c["arr"]
    return calls, in_batch


def main(paths):
    if not paths:
        print("usage: call_trace.py TRACE...", file=sys.stderr)
        sys.exit(2)
    for p in paths:
        calls, in_batch = load(p)
        tot = lambda k: sum(c[k] for c in calls.values())
        n = len(calls)
        if n == 0:
            print(f"{p}: no call in the trace", file=sys.stderr)
            sys.exit(2)
        print(f"{p}: {n} calls, e2e mean {tot('e2e') / n:.4f} s; sums: first-token waits {tot('wait'):.0f} s, "
              f"decode phases {tot('dec'):.0f} s (in the batch {in_batch:.0f} s, left out {tot('dec') - in_batch:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
