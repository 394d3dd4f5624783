#!/usr/bin/env python3
"""Issue 12 Show 1's bars per family, rate and seed, with the measurements
behind every failed bar (scripts/policy_check.sh's reports).

    scripts/policy_check_why.py [--grid] DIR FAMILY[,FAMILY...] [SEED...]

DIR holds FAMILY-sSEED.json (scripts/policy_rates.sh); a (family, seed)
without its report is skipped. The bars are policy_rates_table.py's (mean
lowest of the non-oracle policies with a 0.1 % tie, p99 within 1.1x of the
lowest, throughput within 0.98x of the highest, recompute no more than
infercept's), judged per seed rather than on the seeds' mean. Per failed bar
the row gives what the JSON says about it: for the mean and the p99, pitstop's
against the policy that sets the bar, with both TTFT p99s (a long e2e tail with
a short TTFT tail is time lost after the call started), both p99 waits from
a tool's return to the call's swap-in (its KV on the host tier), and the
preemptions; for throughput, the programs finished and where the run stopped;
for recompute, pitstop's and infercept's recompute by cause (tool discards,
preemptions, host tier), swap-out and refused swaps. Last, the bars met of all.
--grid prints instead one row per family and rate, the bars of each seed side
by side (✓/✗ for mean, p99, throughput, recompute; "-" where a seed's report
is missing).
"""
import json
import os
import sys

BARS = ("mean", "p99", "thr", "rec")


def runs(path):
    with open(path) as f:
        return json.load(f)["runs"]


def judge(rs):
    """The four bars of pitstop among rs (one rate, one seed) and why-lines."""
    by = {r["policy"]: r for r in rs}
    ps = by["pitstop"]
    others = [p for p in by if p != "pitstop"]
    best = min(others, key=lambda p: by[p]["e2e_mean_s"])
    low = min(by, key=lambda p: by[p]["e2e_p99_s"])
    high = max(by, key=lambda p: by[p]["throughput_rps"])
    inf = by["infercept"]
    ok = (ps["e2e_mean_s"] <= by[best]["e2e_mean_s"] * 1.001,
          ps["e2e_p99_s"] <= 1.1 * by[low]["e2e_p99_s"],
          ps["throughput_rps"] >= 0.98 * by[high]["throughput_rps"],
          ps["recompute_tokens"] <= inf["recompute_tokens"])
    why = []
    if not ok[0]:
        b = by[best]
        why.append(f"mean {ps['e2e_mean_s']:.2f} vs {best} {b['e2e_mean_s']:.2f} "
                   f"({ps['e2e_mean_s']/b['e2e_mean_s']:.3f}x; TTFT mean {ps['ttft_mean_s']:.2f} vs {b['ttft_mean_s']:.2f}, "
                   f"preemptions {ps['preemptions']} vs {b['preemptions']})")
    if not ok[1]:
        b = by[low]
        wait = lambda r: r.get("host_tier", {}).get("swap_in_wait_p99_s", 0)
        why.append(f"p99 {ps['e2e_p99_s']:.0f} vs {low} {b['e2e_p99_s']:.0f} ({ps['e2e_p99_s']/b['e2e_p99_s']:.2f}x; "
                   f"TTFT p99 {ps['ttft_p99_s']:.0f} vs {b['ttft_p99_s']:.0f}, swap-in wait p99 {wait(ps):.0f} vs {wait(b):.0f}, "
                   f"preemptions {ps['preemptions']} vs {b['preemptions']}, "
                   f"recompute {ps['recompute_tokens']/1e6:.2f} vs {b['recompute_tokens']/1e6:.2f} M)")
    if not ok[2]:
        b = by[high]
        why.append(f"throughput {ps['throughput_rps']:.3f} vs {high} {b['throughput_rps']:.3f} "
                   f"({ps['throughput_rps']/b['throughput_rps']:.3f}x; programs done {ps['programs_completed']}/{ps['programs']}"
                   f"{', stopped at %g s' % ps['stopped_at_s'] if ps.get('stopped_at_s') else ''})")
    if not ok[3]:
        rb = ps.get("recompute_by", {})
        ref = ps.get("host_tier", {}).get("refused_swaps", {}) or {}
        iref = inf.get("host_tier", {}).get("refused_swaps", {}) or {}
        ib = inf.get("recompute_by", {})
        cause = lambda b: "/".join(f"{b.get(k, 0):,}" for k in ("tool", "preempted", "host"))
        why.append(f"recompute {ps['recompute_tokens']:,} vs infercept {inf['recompute_tokens']:,} tokens "
                   f"(tool/preempted/host {cause(rb)} vs {cause(ib)}; swap out {ps['swap_out_bytes']/1e9:.1f} vs "
                   f"{inf['swap_out_bytes']/1e9:.1f} GB; refused swaps {sum(ref.values())} vs {sum(iref.values())}; "
                   f"preemptions {ps['preemptions']} vs {inf['preemptions']})")
    return ok, why


def runs_by_rate(d, fam, seed):
    """The runs of DIR/FAM-sSEED.json grouped by rate, or None without the file."""
    path = os.path.join(d, f"{fam}-s{seed}.json")
    if not os.path.exists(path):
        return None
    rates = {}
    for r in runs(path):
        rates.setdefault(r["rate"], []).append(r)
    return rates


def grid(d, fams, seeds):
    """One row per family and rate, the bars of every seed side by side."""
    print(f"| family | rate | {' | '.join('seed ' + s for s in seeds)} |")
    print(f"|---|---:|{'---|' * len(seeds)}")
    met = total = 0
    for fam in fams:
        cells = {}
        for s in seeds:
            rates = runs_by_rate(d, fam, s)
            if rates is None:
                continue
            for rate, rs in rates.items():
                ok, _ = judge(rs)
                met += sum(ok)
                total += len(ok)
                cells[(rate, s)] = "".join("✓" if o else "✗" for o in ok)
        for rate in sorted({k[0] for k in cells}):
            print(f"| {fam} | {rate:g} | {' | '.join(cells.get((rate, s), '-') for s in seeds)} |")
    print()
    print(f"bars met: {met} of {total}")


def main():
    args = sys.argv[1:]
    if len(args) < 2 or (args[0] == "--grid" and len(args) < 3):
        print("usage: scripts/policy_check_why.py [--grid] DIR FAMILY[,FAMILY...] [SEED...]", file=sys.stderr)
        sys.exit(2)
    if args[0] == "--grid":
        grid(args[1], args[2].split(","), args[3:] or ["1"])
        return
    d, fams, seeds = args[0], args[1].split(","), args[2:] or ["1"]
    print("| family | seed | rate | mean / p99 / throughput / recompute | why (failed bars, from the JSON) |")
    print("|---|---:|---:|---|---|")
    met = total = 0
    per_bar = dict.fromkeys(BARS, 0)
    for fam in fams:
        for s in seeds:
            rates = runs_by_rate(d, fam, s)
            if rates is None:
                continue
            for rate in sorted(rates):
                ok, why = judge(rates[rate])
                met += sum(ok)
                total += len(ok)
                for b, o in zip(BARS, ok):
                    per_bar[b] += o
                marks = "".join("✓" if o else "✗" for o in ok)
                print(f"| {fam} | {s} | {rate:g} | {marks} | {'; '.join(why)} |")
    print()
    print(f"bars met: {met} of {total} (mean {per_bar['mean']}, p99 {per_bar['p99']}, "
          f"throughput {per_bar['thr']}, recompute {per_bar['rec']}, of {total // 4} each)")


if __name__ == "__main__":
    main()
