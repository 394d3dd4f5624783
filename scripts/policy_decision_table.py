#!/usr/bin/env python3
"""Expected vs realized cost of handling decisions (bench JSON decision_cost).

    scripts/policy_decision_table.py REPORT.json [RATE]

Per policy at RATE (default: the highest in the report): for each handling
kind chosen at tool calls, the count and the waste in GB·s that InferCept's
model expected with the predicted tool time, realized with the true one, and
the least any kind would have realized (hindsight); regret = realized -
hindsight.
"""
import json
import sys


def main():
    runs = json.load(open(sys.argv[1]))["runs"]
    rate = float(sys.argv[2]) if len(sys.argv) > 2 else max(r["rate"] for r in runs)
    print("| policy | kind | decisions | expected, GB·s | realized, GB·s | hindsight, GB·s | regret |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in runs:
        if r["rate"] != rate:
            continue
        dc = r.get("decision_cost") or {}
        tot = [0, 0, 0, 0]
        for k in ("preserve", "swap", "discard"):
            if k not in dc:
                continue
            d = dc[k]
            tot = [tot[0] + d["count"], tot[1] + d["expected_gb_s"], tot[2] + d["realized_gb_s"], tot[3] + d["hindsight_gb_s"]]
            print(f"| {r['policy']} | {k} | {d['count']} | {d['expected_gb_s']:.0f} | {d['realized_gb_s']:.0f} | "
                  f"{d['hindsight_gb_s']:.0f} | {d['realized_gb_s'] - d['hindsight_gb_s']:.0f} |")
        if tot[0]:
            print(f"| {r['policy']} | **all** | {tot[0]} | {tot[1]:.0f} | {tot[2]:.0f} | {tot[3]:.0f} | {tot[2] - tot[3]:.0f} |")


if __name__ == "__main__":
    main()
