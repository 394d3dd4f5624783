#!/usr/bin/env python3
"""Where pitstop stands on issue 12's Show 2 and Show 3, from reports in the repo.

    scripts/policy_standing.py recompute DIR [PITSTOP_DIR] SEED FAMILY...
    scripts/policy_standing.py sustained SOURCE...

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


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("recompute", "sustained"):
        sys.exit(__doc__)
    if sys.argv[1] == "recompute":
        recompute(sys.argv[2:])
    else:
        sustained(sys.argv[2:])


if __name__ == "__main__":
    main()
