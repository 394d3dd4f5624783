#!/usr/bin/env python3
"""Groups the CPU samples of a router process (pitstop serve --backend) by
where they ran: the Go runtime's scheduler and sysmon, net/http's server and
client goroutines, pitstop's own code (router, api, runtime), the collector.
docs/results-router.md section 4, "Where a router's CPU per call goes".

    perf record -F 1999 -g -p ROUTER_PID -o perf.data -- sleep 9   # under load
    perf script -i perf.data > perf.txt
    scripts/router_perf_groups.py perf.txt

Each sample goes to the first group, in the order below, whose pattern one
of its frames holds; "kernel" is the share of a group's samples whose leaf
frame is in the kernel.
"""
import collections
import sys

GROUPS = [
    ("Go runtime: sysmon", ["runtime.sysmon"]),
    ("Go runtime: collector", ["gcBgMarkWorker", "bgsweep", "bgscavenge", "gcAssist"]),
    ("net/http client: writeLoop goroutine", ["persistConn).writeLoop"]),
    ("net/http client: readLoop goroutine", ["persistConn).readLoop"]),
    ("router: generation: reading the stream", ["Backend).readStream"]),
    ("router: generation: net/http client round trip", ["Transport).RoundTrip", "Transport).roundTrip"]),
    ("router: generation: encoding the request", ["Backend).body"]),
    ("router: generation: other (pick, admission, booking, turn loop)", ["remote.(*Router).Generate", "remoteCall).run"]),
    ("api: decoding the request", ["DecodeChatRequest"]),
    ("api: reading the body", ["Server).readBody"]),
    ("runtime: call setup (Chat)", ["runtime.(*Runtime).Chat"]),
    ("api: answer, metrics, rest of the handler", ["echo/v4.(*context).JSON", "chatCompletions"]),
    ("net/http server: writing the response", ["finishRequest"]),
    ("net/http server: reading the request", ["conn).readRequest"]),
    ("net/http server: other", ["conn).serve"]),
    ("net/http server: background read goroutine", ["backgroundRead"]),
    ("Go runtime: scheduler (idle, wakeups)", ["runtime.mcall", "runtime.park_m", "findRunnable", "runtime.schedule", "runtime.mstart"]),
    ("Go runtime: stack growth", ["morestack", "newstack"]),
]
# The generation's groups only count inside a generation.
IN_GENERATION = ("remote.(*Router).Generate", "remoteCall).run")


def group(frames):
    in_gen = any(g in f for f in frames for g in IN_GENERATION)
    for name, pats in GROUPS:
        if name.startswith("router: generation") and not in_gen:
            continue
        if any(p in f for f in frames for p in pats):
            return name
    if frames and all(f.startswith("[k]") for f in frames):
        return "kernel, no Go frame"
    return "other"


def samples(path):
    cur = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line.strip():
            if cur:
                yield cur
            cur = []
        elif line[0] not in " \t":
            cur = []  # a sample's header line
        else:
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                sym = parts[1]
                kernel = "[kernel.kallsyms]" in sym
                cur.append(("[k]" if kernel else "") + sym.split("+0x")[0].split(" (")[0])
    if cur:
        yield cur


def main():
    total, kernel = collections.Counter(), collections.Counter()
    for frames in samples(sys.argv[1]):
        g = group(frames)
        total[g] += 1
        kernel[g] += frames[0].startswith("[k]")
    n = sum(total.values())
    print(f"{n} samples")
    for g, c in total.most_common():
        print(f"{100 * c / n:5.1f}%  (kernel {100 * kernel[g] / c:3.0f}%)  {g}")
    print(f"kernel overall {100 * sum(kernel.values()) / n:.1f}%")


if __name__ == "__main__":
    main()
