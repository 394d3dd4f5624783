#!/usr/bin/env python3
"""Where pitstop stands on issue 12's Show 2 and Show 3, from reports in the repo.

    scripts/policy_standing.py recompute DIR [PITSTOP_DIR] SEED FAMILY...
    scripts/policy_standing.py sustained SOURCE...
    scripts/policy_standing.py grid REPORT...
    scripts/policy_standing.py targets GRID_DIR [SCRIPT]

recompute (Show 3): per family, at the top rate of its grid, every policy's
recomputed tokens (M, with recompute_by's split into tool discards /
preemptions / host tier) and GB swapped out and in, from DIR/FAMILY-sSEED.json
(scripts/policy_rates.sh). With PITSTOP_DIR, pitstop's run is taken from
there instead (a rerun of pitstop alone against the same baselines). Then
pitstop against infercept: recompute ratio and whether the bar (pitstop
recomputes no more than infercept) holds. A run stopped before it drained is
marked "stopped": its counters cover what it did by then.

sustained (Show 2): per family, the sustained rate of every policy (seed 1,
and the mean over the seeds when a search had three), pitstop's ratio to the
best other policy on seed 1 and on the three-seed mean where both have it.
SOURCE is a sustained report (bench --sustained --json) or a log of `make
bench-policies` (its printed tables); later sources replace earlier ones for
the same family and policy, so list the oldest first. Pass only pitstop
searches made with its default tail: the file names' tags are not read.

grid (Show 2 on one binary): REPORTs are sustained reports (bench --sustained
--json), each searching every policy on one family and one or more seeds (one
report per seed, e.g. scripts/policy_sustained.sh with SEEDS=1 and --seed S).
Per family one row: each policy's sustained rate (per seed, then the mean
over the seeds every policy has), the best other non-oracle policy, pitstop's
ratio to it, the search's settings (start, resolution, p99 target) and its
boundaries: a rate of 0 (not sustained even at the resolution: the search's
floor) or at the report's max_rate (its ceiling) is not a measurement and is
flagged. Then, per family, why each policy's lowest unsustained rate failed
(seed 1), and the sustained rates whose trial read below the throughput bar
and passed on the test's confidence bound (with the ratio it would have
failed below).

targets (the p99 targets of scripts/policy_sustained.sh, reproducibly): per
family, 3x the lowest p99 call e2e of the non-oracle policies at the lowest
(light) rate of its grid report GRID_DIR/FAMILY-s1.json (scripts/policy_rates.sh,
seed 1), rounded to 3 significant figures, beside the target SCRIPT
(scripts/policy_sustained.sh) passes as --sustained-p99, and whether they
agree within 1 %. Exit status 1 when one disagrees.
"""
import json
import re
import sys

# (workload, profile) -> family name of scripts/policy_rates.sh
VICUNA = "a100-40g-vicuna-13b"


def family(workload, profile):
    return workload + "-vicuna" if profile == VICUNA else workload


def gb(b):
    return b / 1e9


def recompute(args):
    d, pdir = args[0], None
    if len(args) > 2 and not args[1].isdigit():
        pdir, args = args[1], [args[0]] + args[2:]
    seed, fams = args[1], args[2:]
    print("| family @ top rate | policy | recompute, M tokens (tool / preempted / host) | swap out / in, GB | |")
    print("|---|---|---:|---:|---|")
    verdicts = []
    for f in fams:
        with open(f"{d}/{f}-s{seed}.json") as fh:
            runs = json.load(fh)["runs"]
        top = max(r["rate"] for r in runs)
        at = [r for r in runs if r["rate"] == top]
        if pdir:
            with open(f"{pdir}/{f}-s{seed}.json") as fh:
                ps = [r for r in json.load(fh)["runs"] if r["rate"] == top and r["policy"] == "pitstop"]
            at = [r for r in at if r["policy"] != "pitstop"] + ps
        by = {r["policy"]: r for r in at}
        first = True
        for p, r in by.items():
            rb = r.get("recompute_by") or {}
            split = " / ".join(f"{rb.get(k, 0) / 1e6:.2f}" for k in ("tool", "preempted", "host"))
            stop = "stopped" if r.get("stopped_at_s") else ""
            name = f"{f} @{top:g}" if first else ""
            first = False
            print(f"| {name} | {p} | {r['recompute_tokens'] / 1e6:.2f} ({split}) | "
                  f"{gb(r['swap_out_bytes']):.0f} / {gb(r['swap_in_bytes']):.0f} | {stop} |")
        ps, inf = by["pitstop"], by["infercept"]
        pr, ir = ps["recompute_tokens"], inf["recompute_tokens"]
        ratio = f"{pr / ir:.3f}x" if ir else ("0 vs 0" if pr == 0 else "inf")
        verdicts.append(f"- {f} @{top:g}: pitstop {pr / 1e6:.3f} M against infercept's {ir / 1e6:.3f} M "
                        f"({ratio}; {pr - ir:+,} tokens), swap out {gb(ps['swap_out_bytes']):.0f} against "
                        f"{gb(inf['swap_out_bytes']):.0f} GB: {'holds' if pr <= ir else 'FAILS'}")
    print()
    print("\n".join(verdicts))


def read_log(path):
    """The tables that `bench --sustained` prints, as {family: {policy: (rate, [per seed])}}."""
    out, fam = {}, None
    head = re.compile(r"^sustained rate \(programs/s\) on ([\w-]+), ([\w-]+);")
    for line in open(path):
        m = head.match(line)
        if m:
            fam = family(m.group(1), m.group(2))
            out[fam] = {}
            continue
        parts = line.split()
        if fam and len(parts) >= 3 and re.fullmatch(r"[\d.]+", parts[1]) and "/" in parts[2] + "/":
            out[fam][parts[0]] = (float(parts[1]), [float(x) for x in parts[2].split("/")])
        elif fam and not line.startswith(" "):
            fam = None if not line.strip() or line.startswith("plot") else fam
    return out


def read_json(path):
    with open(path) as fh:
        d = json.load(fh)
    fam = family(d["workload"], d["profile"])
    return {fam: {p["policy"]: (p["sustained_rate"], [s["sustained_rate"] for s in p["seeds"]])
                  for p in d["policies"]}}


def sustained(sources):
    table, src = {}, {}
    for s in sources:
        got = read_log(s) if s.endswith(".log") else read_json(s)
        for fam, pols in got.items():
            for p, v in pols.items():
                table.setdefault(fam, {})[p] = v
                src.setdefault(fam, {})[p] = s
    print("| family | policy | seed 1 | mean over 3 seeds (per seed) | source |")
    print("|---|---|---:|---:|---|")
    lines = []
    for fam, pols in table.items():
        for i, (p, (mean, seeds)) in enumerate(pols.items()):
            three = f"{mean:.4g} ({'/'.join(f'{x:g}' for x in seeds)})" if len(seeds) >= 3 else ""
            print(f"| {fam if i == 0 else ''} | {p} | {seeds[0]:.4g} | {three} | {src[fam][p]} |")
        if "pitstop" not in pols:
            continue
        others = {p: v for p, v in pols.items() if p != "pitstop"}
        if not others:
            continue
        top1 = max(v[1][0] for v in others.values())
        best1 = ", ".join(p for p, v in others.items() if v[1][0] == top1)
        ps = pols["pitstop"]
        line = f"- {fam}: seed 1 pitstop {ps[1][0]:.4g} against {best1} {top1:.4g} ({ps[1][0] / top1:.2f}x)"
        three = {p: v for p, v in others.items() if len(v[1]) >= 3}
        if len(ps[1]) >= 3 and three:
            topm = max(v[0] for v in three.values())
            bestm = ", ".join(p for p, v in three.items() if v[0] == topm)
            line += f"; 3 seeds {ps[0]:.4g} against {bestm} {topm:.4g} ({ps[0] / topm:.2f}x)"
        lines.append(line)
    print()
    print("\n".join(lines))


POLICIES = ("fcfs", "vllm-opt", "infercept", "lamps", "atlas", "pitstop")


def why(seed):
    """Why the lowest unsustained trial failed, briefly."""
    for t in seed["trials"]:
        if not t["sustained"] and t["rate"] == seed["lowest_unsustained_rate"]:
            r = re.sub(r" of the programs due finished( \(.*?\))? < [\d.]+( by more than [\d.]+ sd)?", r"\1",
                       t.get("reason", ""))
            return f"{t['rate']:g} ({r.replace('latency: ', '').replace(' > target', ' >')})"
    return "none unsustained"


def grid(paths):
    fams, meta = {}, {}
    for path in paths:
        with open(path) as fh:
            d = json.load(fh)
        fam = family(d["workload"], d["profile"])
        meta.setdefault(fam, []).append(d)
        for p in d["policies"]:
            for sd in p["seeds"]:
                fams.setdefault(fam, {}).setdefault(p["policy"], {})[sd["seed"]] = sd
    print("| family | " + " | ".join(POLICIES) + " | best other | pitstop / best other (mean; first seed) | start, resolution, p99 target |")
    print("|---|" + "---:|" * len(POLICIES) + "---|---:|---|")
    notes, whys = [], []
    for fam, pols in fams.items():
        m = meta[fam][0]
        common = sorted(set.intersection(*(set(v) for v in pols.values())))
        mean = {p: sum(v[s]["sustained_rate"] for s in common) / len(common) for p, v in pols.items()}
        cells = []
        for p in POLICIES:
            if p not in pols:
                cells.append("–")
                continue
            per = "/".join(f"{pols[p][s]['sustained_rate']:.4g}" for s in sorted(pols[p]))
            cells.append(f"{mean[p]:.4g} ({per})" if len(pols[p]) > 1 else per)
            for s, sd in sorted(pols[p].items()):
                r = sd["sustained_rate"]
                if r == 0:
                    notes.append(f"- {fam} {p} seed {s}: 0, the search's floor (not sustained at {sd['lowest_unsustained_rate']:g})")
                elif r >= m["max_rate"]:
                    notes.append(f"- {fam} {p} seed {s}: {r:g}, the search's ceiling (max_rate)")
        others = {p: v for p, v in mean.items() if p != "pitstop"}
        top = max(others.values())
        best = ", ".join(p for p, v in others.items() if v == top)
        ratio = f"{mean['pitstop'] / top:.3f}x" if "pitstop" in mean and top > 0 else "–"
        if "pitstop" in mean and len(common) > 1:  # and on the first seed alone
            first = {p: v[common[0]]["sustained_rate"] for p, v in pols.items()}
            top1 = max(r for p, r in first.items() if p != "pitstop")
            ratio += f" (seed {common[0]}: {first['pitstop'] / top1:.3f}x)" if top1 > 0 else ""
        starts = sorted({(t["rate"]) for v in pols.values() for sd in v.values() for t in sd["trials"][:1]})
        seeds = ",".join(str(s) for s in common)
        print(f"| {fam} (seeds {seeds}) | " + " | ".join(cells) +
              f" | {best} {top:.4g} | {ratio} | {'/'.join(f'{x:g}' for x in starts)}, {m['resolution']:g}, "
              f"{m['p99_e2e_target_s']:g} s |")
        whys.append(f"- {fam}: " + "; ".join(f"{p} {why(pols[p][min(pols[p])])}" for p in POLICIES if p in pols))
    print()
    print("Boundaries (a rate at the search's floor or ceiling is not a measurement):")
    print("\n".join(notes) if notes else "- none: every rate lies strictly between the floor (0) and the ceiling")
    print()
    print("Lowest unsustained rate and why, first seed:")
    print("\n".join(whys))
    bound = []
    for fam, pols in fams.items():
        m = meta[fam][0]
        z, bar = m.get("throughput_z", 0), m["min_throughput"]
        for p in POLICIES:
            for s, sd in sorted(pols.get(p, {}).items()):
                t = next((t for t in sd["trials"] if t["sustained"] and t["rate"] == sd["sustained_rate"]), None)
                if t and t["throughput_ratio"] < bar and t.get("throughput_due"):
                    fence = (bar * t["throughput_due"] - z * t["throughput_sd"]) / t["throughput_due"]
                    bound.append(f"- {fam} {p} seed {s} @{t['rate']:g}: {t['throughput_ratio']:.3f} of due "
                                 f"({t['throughput_done']} of {t['throughput_due']:.1f}, sd {t['throughput_sd']:.1f}; "
                                 f"fails below {fence:.3f})")
    print()
    print("Sustained rates whose trial read below the bar and passed on the confidence bound (z sd):")
    print("\n".join(bound) if bound else "- none")


FAMILIES = ("infercept-multi", "mixed", "coding", "fanout", "infercept-single", "infercept-multi-vicuna",
            "infercept-single-vicuna", "chat", "react", "mcts", "azure-conv", "mooncake-conv", "azure-code")


def script_targets(path):
    """{family: --sustained-p99} from scripts/policy_sustained.sh's case arms."""
    arm = re.compile(r"^\s*([\w-]+)\)\s.*--sustained-p99 ([\d.]+)")
    return {m.group(1): float(m.group(2)) for m in map(arm.match, open(path)) if m}


def targets(args):
    d = args[0]
    have = script_targets(args[1] if len(args) > 1 else "scripts/policy_sustained.sh")
    print("| family | light rate | lowest p99 there, s (policy) | 3x, s | script's target, s | |")
    print("|---|---:|---:|---:|---:|---|")
    bad = 0
    for f in FAMILIES:
        try:
            with open(f"{d}/{f}-s1.json") as fh:
                runs = [r for r in json.load(fh)["runs"] if r["policy"] in POLICIES]
        except FileNotFoundError:
            sys.exit(f"targets: no grid report {d}/{f}-s1.json (scripts/policy_rates.sh OUTDIR 1 {f})")
        light = min(r["rate"] for r in runs)
        best = min((r for r in runs if r["rate"] == light), key=lambda r: r["e2e_p99_s"])
        want = float(f"{3 * best['e2e_p99_s']:.3g}")
        got = have.get(f)
        ok = got is not None and abs(got - want) <= 0.01 * want
        bad += not ok
        print(f"| {f} | {light:g} | {best['e2e_p99_s']:.2f} ({best['policy']}) | {want:g} | "
              f"{'–' if got is None else f'{got:g}'} | {'agrees' if ok else 'DIFFERS'} |")
    sys.exit(1 if bad else 0)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("recompute", "sustained", "grid", "targets"):
        sys.exit(__doc__)
    if sys.argv[1] == "targets":
        targets(sys.argv[2:])
    elif sys.argv[1] == "recompute":
        recompute(sys.argv[2:])
    elif sys.argv[1] == "grid":
        grid(sys.argv[2:])
    else:
        sustained(sys.argv[2:])


if __name__ == "__main__":
    main()
