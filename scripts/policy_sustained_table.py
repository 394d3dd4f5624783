#!/usr/bin/env python3
"""One table of scripts/policy_sustained.sh's reports (issue 12 Show 2).

    scripts/policy_sustained_table.py [--merge OUT] DIR [FAMILY...]

DIR holds FAMILY-TAG.json reports, TAG being the searched policies joined by
'+', then '-' and the script's TAG when it was set (pitstop under different
extra flags, e.g. pitstop-aging, pitstop-rescue). A policy searched under a
TAG is shown as "policy (TAG)". FAMILY defaults to every family found, in
policy_sustained.sh's order.

Per family and policy: the sustained rate (mean over the seeds; per seed), for
pitstop its ratio to the best other policy's mean, and at each seed's
sustained rate the call e2e mean / p99, completed calls/s, tokens recomputed
(M) and GB swapped out (averaged over the seeds), with the first unsustained
rate's failure reason on the first seed. Then a line per family: which pitstop
tail rule sustains the most, and whether pitstop with the default rule
(--pitstop-tail aging, tagged "aging", or untagged) is the highest, tied
(within one resolution step of the best other policy) or below, with the
reason of its first unsustained rate per seed when it is not the highest.
--merge OUT also writes OUT/FAMILY.json, one report of every series of the
family (a tagged series named "p:TAG"), for `pitstop bench --sustained-from
OUT/FAMILY.json --out PLOTS` to draw them in one plot.
"""
import glob
import json
import os
import sys

FAMILIES = ["azure-code", "mixed", "azure-conv", "chat", "fanout", "mcts", "react",
            "infercept-single", "infercept-single-vicuna", "infercept-multi-vicuna",
            "mooncake-conv", "coding", "infercept-multi"]
DEFAULT_TAIL = "aging"
TAILS = ["", DEFAULT_TAIL, "rescue", "aging+control"]  # row order of pitstop's tail rules


def series(d, fam):
    """The policy searches of fam in d: [(name, tag, policy report, resolution)],
    name "policy" or "policy (TAG)"."""
    out = []
    for path in sorted(glob.glob(os.path.join(d, f"{fam}-*.json"))):
        rest = os.path.basename(path)[len(fam) + 1:-len(".json")]
        with open(path) as f:
            rep = json.load(f)
        pols = "+".join(p["policy"] for p in rep["policies"])
        # a longer family's file (infercept-multi-vicuna-... under infercept-multi)
        # does not start with its own policies
        if rest != pols and not rest.startswith(pols + "-"):
            continue
        tag = rest[len(pols) + 1:]
        for p in rep["policies"]:
            name = f"{p['policy']} ({tag})" if tag else p["policy"]
            out.append((name, tag, p, rep["resolution"], rep))
    # baselines first, then pitstop's tail rules in TAILS's order, others last
    rank = lambda tag: TAILS.index(tag) if tag in TAILS else len(TAILS)
    return sorted(out, key=lambda s: (s[2]["policy"] == "pitstop", rank(s[1])))


def at_rate(seed):
    """The run at seed's sustained rate (None when nothing was sustained)."""
    runs = [t["run"] for t in seed["trials"] if t["sustained"] and t["rate"] == seed["sustained_rate"]]
    return runs[-1] if runs else None


def first_unsustained(seed):
    """(rate, reason) of seed's lowest unsustained trial."""
    for t in seed["trials"]:
        if not t["sustained"] and t["rate"] == seed["lowest_unsustained_rate"]:
            return t["rate"], t.get("reason", "")
    return None, ""


def fmt(x):
    return f"{x:.4g}"


def row(fam, name, p, ratio):
    seeds = p["seeds"]
    per = "/".join(fmt(s["sustained_rate"]) for s in seeds)
    runs = [r for r in (at_rate(s) for s in seeds) if r]
    avg = lambda k: sum(r[k] for r in runs) / len(runs)
    rate, why = first_unsustained(seeds[0])
    at = (f"{avg('e2e_mean_s'):.1f} / {avg('e2e_p99_s'):.0f} | {avg('throughput_rps'):.2f} | "
          f"{avg('recompute_tokens') / 1e6:.2f} | {avg('swap_out_bytes') / 1e9:.0f}") if runs else "– | – | – | –"
    rat = f"{ratio:.2f}x" if ratio is not None else ""
    return (f"| {fam} | {name} | {fmt(p['sustained_rate'])} ({per}) | {rat} | {at} | "
            f"{fmt(rate) if rate is not None else '–'}: {why} |")


def family(d, fam, out=print):
    """Prints fam's rows and returns its verdict line (None when fam has no reports)."""
    ss = series(d, fam)
    if not ss:
        return None
    others = [(n, p["sustained_rate"]) for n, _, p, _, _ in ss if p["policy"] != "pitstop"]
    best_other = max((r for _, r in others), default=None)
    res = ss[0][3]
    for n, _, p, _, _ in ss:
        ratio = p["sustained_rate"] / best_other if p["policy"] == "pitstop" and best_other else None
        out(row(fam if n == ss[0][0] else "", n, p, ratio))
    pit = [(tag, p) for _, tag, p, _, _ in ss if p["policy"] == "pitstop"]
    if not pit:
        return f"- {fam}: no pitstop search"
    top = max(p["sustained_rate"] for _, p in pit)
    winners = ", ".join(tag or "untagged" for tag, p in pit if p["sustained_rate"] == top)
    line = f"- {fam}: most sustained by pitstop ({winners}) at {fmt(top)}"
    default = [p for tag, p in sorted(pit, key=lambda tp: tp[0] != DEFAULT_TAIL) if tag in (DEFAULT_TAIL, "")]
    if not default or best_other is None:
        return line
    p = default[0]
    steps = (p["sustained_rate"] - best_other) / res
    best = ", ".join(n for n, r in others if r == best_other)
    verdict = "highest" if steps > 1 + 1e-9 else "below" if steps < -1 - 1e-9 else "tied"
    line += (f"; pitstop ({DEFAULT_TAIL}) {fmt(p['sustained_rate'])} is {verdict} "
             f"({steps:+.2f} steps of {fmt(res)} against {best}'s {fmt(best_other)}, "
             f"{p['sustained_rate'] / best_other:.2f}x)")
    if verdict != "highest":
        whys = []
        for s in p["seeds"]:
            rate, why = first_unsustained(s)
            whys.append(f"seed {s['seed']} @{fmt(rate) if rate is not None else '–'}: {why}")
        line += "; first unsustained: " + "; ".join(whys)
    return line


def merge(d, fam, out):
    """Writes out/fam.json: fam's reports as one, each series named as in the table."""
    ss = series(d, fam)
    if not ss:
        return
    rep = dict(ss[0][4])
    # short names, so the plot's labels do not overlap
    rep["policies"] = [dict(p, policy=f"p:{tag}" if tag else p["policy"]) for _, tag, p, _, _ in ss]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{fam}.json"), "w") as f:
        json.dump(rep, f, indent=1)


def main(argv):
    merge_out = None
    if len(argv) > 2 and argv[1] == "--merge":
        merge_out, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) < 2:
        print("usage: " + __doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    d, fams = argv[1], argv[2:] or FAMILIES
    if merge_out:
        for f in fams:
            merge(d, f, merge_out)
    print("| family | policy | sustained rate (mean; per seed) | pitstop / best other | "
          "at it: e2e mean / p99, s | calls/s | recompute, M tokens | swap out, GB | "
          "first unsustained (seed 1): why |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    lines = [l for l in (family(d, f) for f in fams) if l]
    print()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
