#!/usr/bin/env python3
"""Tables from the log of scripts/predictor_cross_source.sh (its stdout).

For every (training row, evaluated source): the cold lines (the model, the
absolute-error mixture "model + blend + mix", the order-scored mixture
"model + order mix" that a fresh serve predicts with) and the second half of
the online replay ("online + order mix", what serve predicts once it has
learnt), with the history baseline. With two logs, before and after side by
side.

  scripts/predictor_cross_table.py LOG [LOG_AFTER]
"""
import re
import sys

LINE = re.compile(r"^(?P<name>.*?)\s+n=(?P<n>\d+)\s+Acc-5\s+(?P<a5>[\d.]+)%\s+Acc-15\s+(?P<a15>[\d.]+)%\s+MAE\s+(?P<mae>[\d.]+) tokens")


def parse(path):
    cells, key, half = {}, None, False
    for line in open(path):
        if line.startswith("== train"):
            m = re.match(r"== train (\S+) \| eval (\S+) \(heldout (\w+)\)", line)
            key = (m.group(1), m.group(2) + (" (held out)" if m.group(3) == "true" else ""))
            cells[key], half = {}, False
            continue
        if key is None:
            continue
        if line.startswith("second half"):
            half = True
            continue
        if line.startswith("rank correlation (Spearman), all records"):
            m = re.search(r"order mix (-?[\d.]+|NaN)", line)
            if m:
                cells[key]["cold rho"] = m.group(1)
            continue
        if line.startswith("  rank correlation"):
            for name, v in re.findall(r" ([^;:]+?) (-?[\d.]+|NaN);", line):
                cells[key]["rho " + name.strip()] = v
            continue
        m = LINE.match(line)
        if m:
            name = m.group("name").strip()
            if half and line.startswith("  "):
                name = "half " + name
            elif not line.startswith("  "):
                half = False
            cells[key][name] = (float(m.group("a5")), float(m.group("a15")), float(m.group("mae")))
    return cells


def fmt(c, name, full=True):
    v = c.get(name)
    if v is None:
        return "-"
    return f"{v[0]:.1f} / {v[1]:.1f} / {v[2]:.1f}" if full else f"{v[0]:.1f}% / {v[2]:.1f}"


def main(paths):
    logs = [parse(p) for p in paths]
    keys = list(logs[-1])
    print("cold, Acc-5 / Acc-15 / MAE: order mix (what a fresh serve predicts; Spearman of the last log"
          + " where it has one)" + (", before -> after" if len(logs) > 1 else "") + "; absolute-error mix; history")
    print("| trained on | evaluated on | order mix | blend + mix | history (train start) |")
    print("|---|---|---|---|---|")
    for k in keys:
        om = " -> ".join(fmt(l.get(k, {}), "model + order mix") for l in logs)
        if "cold rho" in logs[-1][k]:
            om += f" ({logs[-1][k]['cold rho']})"
        bm = " -> ".join(fmt(l.get(k, {}), "model + blend + mix") for l in logs)
        c = logs[-1][k]
        h = fmt(c, "baseline: history, training median start") if "baseline: history, training median start" in c else fmt(c, "baseline: history") + " (training split's median start)"
        print(f"| {k[0]} | {k[1]} | {om} | {bm} | {h} |")
    print()
    print("second half of the online replay, Acc-5 / MAE (Spearman): online + order mix (what serve predicts); history")
    print("| trained on | evaluated on | online + order mix | history | ratio to history |")
    print("|---|---|---|---|---|")
    for k in keys:
        parts = []
        for l in logs:
            c = l.get(k, {})
            parts.append(f"{fmt(c, 'half online + order mix', False)} ({c.get('rho online + order mix', '-')})")
        c = logs[-1][k]
        h = c.get("half history")
        ratio = " -> ".join(f"{l[k]['half online + order mix'][2] / h[2]:.3f}" for l in logs if k in l and h)
        print(f"| {k[0]} | {k[1]} | {' -> '.join(parts)} | {fmt(c, 'half history', False)} ({c.get('rho history', '-')}) | {ratio} |")


if __name__ == "__main__":
    if not 2 <= len(sys.argv) <= 3:
        sys.exit("usage: predictor_cross_table.py LOG [LOG_AFTER]")
    main(sys.argv[1:])
