#!/usr/bin/env python3
"""Is pitstop's sustained rate above, tied with or below the best other policy's? (issue 12 Show 2)

    scripts/policy_ties.py [--policies P,Q,...] [--trials] REPORT...

REPORTs are sustained reports (bench --sustained --json: scripts/policy_sustained.sh),
any mix of families, policies and seeds; for the same family, policy and seed a later
report replaces an earlier one, so list the coarse searches first and the finer ones
after. A seed is named by its arrival seed, and "S@pP" when its program pool seed P
differs from it (SEEDS=3 searches keep pool seed 1 and vary the arrival seed 1-3;
SEEDS=1 --seed S sets both to S, the convention of Show 1's grids; seed 1 is the same
experiment in both).

A search brackets each (policy, seed): it sustained rate s and did not sustain u > s,
so (if sustaining is monotone in the rate) the policy's sustained rate lies in [s, u).
Per family, one row per policy: per seed "s [u-s]" (the bracket's width is the
resolution that seed reached), the mean of s over the seeds every listed policy has,
and why its first unsustained rate failed on the first seed. Then per seed pitstop
against the best other policy:
  above   pitstop's s >= the other's u: higher whatever the rates inside the brackets;
  below   pitstop's u <= the other's s;
  tied    the brackets overlap: the search cannot order them at this resolution
          ("=" when both brackets are the same).
and the family's verdict: above (or below) when every common seed says so, tied when
every seed is tied, otherwise the count of each. --policies keeps only these policies
(pitstop is always kept), e.g. the ones searched again at a finer resolution.
--trials then lists, per family and seed, every policy's trials at or above the lowest
sustained rate of that seed, which bar each met or failed: done/due against the 0.98
fence less z sd (the throughput test), the p99 call e2e against the target, the backlog
(unfinished or late programs), with the call e2e mean, TTFT p99 (the wait before the
first token) and TPOT mean beside, so that where two policies part shows which bar
parts them and by how much.
"""
import json
import sys

from policy_standing import POLICIES, family, why


def key(seed, pool):
    return str(seed) if pool in (None, seed) else f"{seed}@p{pool}"


def load(paths, keep):
    """{family: {policy: {seed key: (seed report, report path)}}}, later paths replacing earlier."""
    fams = {}
    for path in paths:
        with open(path) as fh:
            d = json.load(fh)
        fam = family(d["workload"], d["profile"])
        for p in d["policies"]:
            if keep and p["policy"] not in keep:
                continue
            for sd in p["seeds"]:
                k = key(sd["seed"], d.get("pool_seed"))
                fams.setdefault(fam, {}).setdefault(p["policy"], {})[k] = (sd, path)
    return fams


def bracket(sd):
    s, u = sd["sustained_rate"], sd["lowest_unsustained_rate"]
    return s, (u if u > 0 else float("inf"))


def compare(ps, other):
    (s, u), (os_, ou) = bracket(ps), bracket(other)
    if (s, u) == (os_, ou):
        return "="
    if s >= ou:
        return "above"
    if u <= os_:
        return "below"
    return "tied"


def verdict(per_seed):
    marks = ["tied" if v == "=" else v for v in per_seed.values()]
    for v in ("above", "below", "tied"):
        if all(m == v for m in marks):
            return v
    return ", ".join(f"{marks.count(v)} {v}" for v in ("above", "tied", "below") if marks.count(v))


def order(k):
    seed, _, pool = k.partition("@p")
    return (int(pool or seed) != int(seed), int(seed))


def table(fams):
    print("| family | policy | per seed: sustained [bracket width] | mean over common seeds | first unsustained, why (first seed) |")
    print("|---|---|---|---:|---|")
    lines = []
    for fam, pols in fams.items():
        common = sorted(set.intersection(*(set(v) for v in pols.values())), key=order)
        names = sorted(pols, key=lambda p: POLICIES.index(p) if p in POLICIES else len(POLICIES))
        for i, p in enumerate(names):
            per = " / ".join(f"{k}: {pols[p][k][0]['sustained_rate']:.5g} [{w:.3g}]"
                             for k in sorted(pols[p], key=order)
                             for w in [bracket(pols[p][k][0])[1] - pols[p][k][0]['sustained_rate']])
            mean = sum(pols[p][k][0]["sustained_rate"] for k in common) / len(common) if common else float("nan")
            first = pols[p][sorted(pols[p], key=order)[0]][0]
            print(f"| {fam if i == 0 else ''} | {p} | {per} | {mean:.5g} | {why(first)} |")
        if "pitstop" not in pols or len(pols) < 2 or not common:
            continue
        per_seed, notes = {}, []
        for k in common:
            others = {p: v[k][0] for p, v in pols.items() if p != "pitstop"}
            top = max(sd["sustained_rate"] for sd in others.values())
            best = [p for p, sd in others.items() if sd["sustained_rate"] == top]
            # against the best other; a tie with any other at the same rate is still a tie
            marks = {p: compare(pols["pitstop"][k][0], others[p]) for p in best}
            mark = "tied" if any(m in ("tied", "=") for m in marks.values()) else next(iter(marks.values()))
            per_seed[k] = mark
            ps = pols["pitstop"][k][0]["sustained_rate"]
            notes.append(f"seed {k}: {ps:.5g} vs {'/'.join(best)} {top:.5g} ({ps / top:.3f}x, {mark})")
        pm = sum(pols["pitstop"][k][0]["sustained_rate"] for k in common) / len(common)
        om = max(sum(v[k][0]["sustained_rate"] for k in common) / len(common) for p, v in pols.items() if p != "pitstop")
        lines.append(f"- {fam}: **{verdict(per_seed)}**; mean {pm:.5g} against {om:.5g} "
                     f"({pm / om:.3f}x); " + "; ".join(notes))
    print()
    print("\n".join(lines))


def trial_line(t, target, z, bar):
    r = t["run"]
    due, sd = t.get("throughput_due") or 0, t.get("throughput_sd") or 0
    fence = (bar * due - z * sd) / due if due else float("nan")
    late = t.get("unfinished_programs", 0) + t.get("late_programs", 0)
    stop = ", stopped" if r.get("stopped_at_s") else ""
    return (f"{t['rate']:.5g} {'ok ' if t['sustained'] else 'NOT'}: done/due {t['throughput_ratio']:.4f} "
            f"(fence {fence:.4f}), p99 {r['e2e_p99_s']:.2f}/{target:g} s, backlog {late}{stop}; "
            f"mean {r['e2e_mean_s']:.3f} s, TTFT p99 {r['ttft_p99_s']:.2f} s, TPOT {r['tpot_mean_s'] * 1e3:.1f} ms")


def trials(paths, fams):
    meta = {}
    for path in paths:
        with open(path) as fh:
            d = json.load(fh)
        meta[path] = (d["p99_e2e_target_s"], d.get("throughput_z", 0), d["min_throughput"])
    print()
    for fam, pols in fams.items():
        seeds = sorted({k for v in pols.values() for k in v}, key=order)
        for k in seeds:
            have = {p: v[k] for p, v in pols.items() if k in v}
            low = min(sd["sustained_rate"] for sd, _ in have.values())
            print(f"{fam}, seed {k}:")
            for p, (sd, path) in have.items():
                for t in sorted(sd["trials"], key=lambda t: t["rate"]):
                    if low <= t["rate"] <= sd["lowest_unsustained_rate"] or t["rate"] == low:
                        print(f"  {p:9} {trial_line(t, *meta[path])}")


def main():
    args = sys.argv[1:]
    keep, show = None, False
    if args[:1] == ["--policies"]:
        keep, args = set(args[1].split(",")) | {"pitstop"}, args[2:]
    if args[:1] == ["--trials"]:
        show, args = True, args[1:]
    if not args:
        sys.exit(__doc__)
    fams = load(args, keep)
    table(fams)
    if show:
        trials(args, fams)


if __name__ == "__main__":
    main()
