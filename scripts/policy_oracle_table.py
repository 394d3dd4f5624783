#!/usr/bin/env python3
"""pitstop's lead with the oracle against with the real predictor (issue 21 Show 3).

    scripts/policy_oracle_table.py [--seeds 1,2,3] [--families F,...] ORACLE_DIR[,...] SERVE_DIR[,...]

Reads, per family and seed, the serve runs (FAMILY-sSEED.json;
scripts/policy_rates.sh's names) and the oracle runs (FAMILY-sSEED-oracle.json)
of every directory listed that has the file, a run of the same policy and rate
taken from the first directory listed (so a rerun of some policies goes
first, the reports it completes after); a family's seeds are those (of
--seeds) with both. Means over those seeds. Prints three tables:

1. the lead: best other mean (among the non-pitstop serve runs) / pitstop's
   mean, with pitstop on serve and on the oracle, and the gap (oracle lead /
   serve lead = pitstop's serve mean / its oracle mean); the same for the p99
   (lowest other p99 / pitstop's);
2. why: pitstop's recompute and decision regret (bench JSON decision_cost,
   realized - hindsight, GB·s) on serve and on the oracle, lamps's and
   infercept's means on both, and the lead when every policy that reads
   predictions has the oracle; then pitstop's completed calls per second on
   serve and on the oracle against the highest other (serve) throughput;
3. the handling decisions at each family's top rate (seed 1): expected,
   realized, hindsight, regret per policy and predictor, the discards among
   them (which the model prices as a full recompute, whatever the prefix
   cache keeps), the regret of the other decisions, and the tokens the run
   recomputed.
"""
import json
import os
import sys
from collections import defaultdict

FAMILIES = ["infercept-multi", "infercept-single", "infercept-multi-vicuna", "infercept-single-vicuna",
            "chat", "react", "mcts", "mixed", "azure-conv", "mooncake-conv", "azure-code", "coding", "fanout"]
# Policies that read no prediction: fcfs, vllm-opt and atlas discard at a
# tool call and never read Forecast().Predicted or the predicted tool time.
PREDICTION_FREE = ("fcfs", "vllm-opt", "atlas")


def runs(path):
    with open(path) as f:
        return json.load(f)["runs"]


def avg(rs, key):
    return sum(r[key] for r in rs) / len(rs)


def regret(rs):
    """Mean over rs of realized - hindsight summed over the kinds; None without decisions."""
    tot = []
    for r in rs:
        dc = r.get("decision_cost") or {}
        if not dc:
            return None
        tot.append(sum(d["realized_gb_s"] - d["hindsight_gb_s"] for d in dc.values()))
    return sum(tot) / len(tot)


def merged(dirs, name):
    """The runs of name in every dir that has it, by (rate, policy), the first dir's winning."""
    out = {}
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.exists(p):
            for r in runs(p):
                out.setdefault((r["rate"], r["policy"]), r)
    return out


def load_family(fam, odirs, sdirs, seeds):
    """(seeds used, serve[(rate, policy)] -> runs, oracle[(rate, policy)] -> runs)."""
    serve, orac, used = defaultdict(list), defaultdict(list), []
    for s in seeds:
        sr, orr = merged(sdirs, f"{fam}-s{s}.json"), merged(odirs, f"{fam}-s{s}-oracle.json")
        if not sr or not orr:
            continue
        used.append(s)
        for k, r in sr.items():
            serve[k].append(r)
        for k, r in orr.items():
            orac[k].append(r)
    return used, serve, orac


def fmt_x(a, b):
    return f"{a / b:.2f}x" if b else "-"


def lead_rows(fam, used, serve, orac):
    rates = sorted({k[0] for k in serve})
    pols = sorted({k[1] for k in serve})
    others = [p for p in pols if p != "pitstop"]
    for rate in rates:
        ps, po = serve[(rate, "pitstop")], orac.get((rate, "pitstop"))
        if not po:
            continue
        best = min(others, key=lambda p: avg(serve[(rate, p)], "e2e_mean_s"))
        bm = avg(serve[(rate, best)], "e2e_mean_s")
        low = min(others, key=lambda p: avg(serve[(rate, p)], "e2e_p99_s"))
        lq = avg(serve[(rate, low)], "e2e_p99_s")
        ms, mo = avg(ps, "e2e_mean_s"), avg(po, "e2e_mean_s")
        qs, qo = avg(ps, "e2e_p99_s"), avg(po, "e2e_p99_s")
        stopped = any(r.get("stopped_at_s") for r in serve[(rate, best)] + serve[(rate, low)])
        mark = " (stopped)" if stopped else ""
        yield (rate, f"| {fam} | {','.join(used)} | {rate:g} | {best} {bm:.1f}{mark} | {ms:.1f} / {mo:.1f} | "
               f"{fmt_x(bm, ms)} | {fmt_x(bm, mo)} | {ms / mo:.2f} | {low} {lq:.0f} | {qs:.0f} / {qo:.0f} | "
               f"{fmt_x(lq, qs)} | {fmt_x(lq, qo)} | {qs / qo:.2f} |")


def why_rows(fam, used, serve, orac):
    rates = sorted({k[0] for k in serve})
    pols = sorted({k[1] for k in serve})
    for rate in rates:
        ps, po = serve[(rate, "pitstop")], orac.get((rate, "pitstop"))
        if not po:
            continue
        rs, ro = regret(ps), regret(po)
        reg = f"{rs:,.0f} / {ro:,.0f}" if rs is not None and ro is not None else "no tool calls"
        cells = []
        best_all = []
        for p in pols:
            if p == "pitstop":
                continue
            m = avg(serve[(rate, p)], "e2e_mean_s")
            o = orac.get((rate, p))
            if o and len(o) != len(serve[(rate, p)]):
                o = None  # oracle runs on fewer seeds than the serve runs: not comparable
            if p in ("lamps", "infercept"):
                cells.append(f"{m:.1f} / {avg(o, 'e2e_mean_s'):.1f}" if o else f"{m:.1f} / -")
            best_all.append(avg(o, "e2e_mean_s") if o else m)
        thr = max(avg(serve[(rate, p)], "throughput_rps") for p in pols if p != "pitstop")
        yield (f"| {fam} | {rate:g} | {avg(ps, 'recompute_tokens') / 1e6:.2f} / {avg(po, 'recompute_tokens') / 1e6:.2f} | "
               f"{reg} | {' | '.join(cells)} | {min(best_all) / avg(po, 'e2e_mean_s'):.2f}x | "
               f"{avg(ps, 'throughput_rps') / thr:.3f}x / {avg(po, 'throughput_rps') / thr:.3f}x |")


def decision_rows(fam, odirs, sdirs):
    serve = list(merged(sdirs, f"{fam}-s1.json").values())
    orac = list(merged(odirs, f"{fam}-s1-oracle.json").values())
    if not serve or not orac:
        return
    rate = max(r["rate"] for r in serve)
    first = True
    for label, rs in (("serve", serve), ("oracle", orac)):
        for r in rs:
            dc = r.get("decision_cost") or {}
            if r["rate"] != rate or not dc or r["policy"] not in ("infercept", "lamps", "pitstop"):
                continue
            n = sum(d["count"] for d in dc.values())
            e, z, h = (sum(d[k] for d in dc.values()) for k in ("expected_gb_s", "realized_gb_s", "hindsight_gb_s"))
            dis = dc.get("discard", {"count": 0, "realized_gb_s": 0, "hindsight_gb_s": 0})
            head = f"{fam} @{rate:g}" if first else ""
            first = False
            dreg = dis["realized_gb_s"] - dis["hindsight_gb_s"]
            yield (f"| {head} | {r['policy']} ({label}) | {n:,} | {e:,.0f} | {z:,.0f} | {h:,.0f} | {z - h:,.0f} | "
                   f"{dis['count']:,}: {dis['realized_gb_s']:,.0f} / {dis['hindsight_gb_s']:,.0f} | {round(z - h - dreg) + 0:,} | "
                   f"{r['recompute_tokens'] / 1e6:.2f} |")


def parse_args(argv, nargs, usage):
    """The --seeds and --families flags of the oracle tables, then nargs
    positional arguments (usage is printed otherwise): (seeds, families, args)."""
    args = argv[1:]
    seeds, fams = ["1", "2", "3"], FAMILIES
    while args and args[0].startswith("--"):
        if args[0] == "--seeds":
            seeds = args[1].split(",")
        elif args[0] == "--families":
            fams = args[1].split(",")
        else:
            sys.exit(f"unknown flag {args[0]} (valid: --seeds, --families)")
        args = args[2:]
    if len(args) != nargs:
        sys.exit(usage)
    return seeds, fams, args


def main():
    seeds, fams, args = parse_args(sys.argv, 2, __doc__)
    odirs, sdirs = args[0].split(","), args[1].split(",")
    loaded = {f: load_family(f, odirs, sdirs, seeds) for f in fams}
    loaded = {f: v for f, v in loaded.items() if v[0]}

    print("| family | seeds | rate | best other mean, s | pitstop mean, s: serve / oracle | lead, serve | lead, oracle | gap | "
          "lowest other p99, s | pitstop p99, s: serve / oracle | p99 lead, serve | p99 lead, oracle | p99 gap |")
    print("|---|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for f, (used, serve, orac) in loaded.items():
        for _, row in lead_rows(f, used, serve, orac):
            print(row)
    print()
    print("| family | rate | pitstop recompute, M tokens: serve / oracle | pitstop regret, GB·s: serve / oracle | "
          "infercept mean, s: serve / oracle | lamps mean, s: serve / oracle | lead, every predicted policy on the oracle | "
          "pitstop calls/s / highest other's: serve / oracle |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for f, (used, serve, orac) in loaded.items():
        for row in why_rows(f, used, serve, orac):
            print(row)
    print()
    print("| family @ top rate | policy (predictor) | decisions | expected | realized | hindsight | regret, GB·s | "
          "discards: realized / hindsight, GB·s | regret outside discards | recomputed, M tokens |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for f in loaded:
        for row in decision_rows(f, odirs, sdirs):
            print(row)


if __name__ == "__main__":
    main()
