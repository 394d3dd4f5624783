#!/usr/bin/env python3
"""Per-position latencies of bench reports (report.Run.ByPosition).

    scripts/policy_positions.py REPORT.json [LABEL=REPORT.json ...]

Prints one markdown row per (report, policy, rate) that has the breakdown:
the calls' e2e mean / p99 and TTFT p99 over all calls, then per position
(first: a program's first call; burst: released together with siblings;
later: released alone after its parents) the TTFT mean / p99 in seconds and
the share of the calls. A LABEL= prefix names the report's rows (default:
the file name).
"""
import json
import os
import sys

POSITIONS = ("first", "burst", "later")


def main(args):
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    head = "| run | policy | rate | e2e mean / p99 | TTFT p99 | " + " | ".join(
        f"{p}: TTFT mean / p99 (share)" for p in POSITIONS) + " |"
    print(head)
    print("|" + "---|" * 3 + "---:|" * (2 + len(POSITIONS)))
    for a in args:
        label, _, path = a.rpartition("=")
        label = label or os.path.basename(path)
        with open(path) as f:
            runs = json.load(f)["runs"]
        for r in runs:
            bp = r.get("by_position")
            if not bp:
                continue
            n = sum(v["calls"] for v in bp.values()) or 1
            cells = []
            for p in POSITIONS:
                v = bp.get(p)
                cells.append("–" if v is None else
                             f"{v['ttft_mean_s']:.2f} / {v['ttft_p99_s']:.1f} ({100 * v['calls'] / n:.1f}%)")
            print(f"| {label} | {r['policy']} | {r['rate']:g} | {r['e2e_mean_s']:.2f} / {r['e2e_p99_s']:.1f} | "
                  f"{r['ttft_p99_s']:.1f} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
