#!/usr/bin/env python3
"""Tables from the log of scripts/predictor_cross_source.sh (its stdout).

For every (training row, evaluated source): the cold lines (the model, the
absolute-error mixture "model + blend + mix", the order-scored mixture
"model + order mix" that a fresh serve predicts with) and the second half of
the online replay ("online + order mix", what serve predicts once it has
learnt), with the history baseline. With two logs, before and after side by
side.

  scripts/predictor_cross_table.py LOG [LOG_AFTER]
  scripts/predictor_cross_table.py --bars LOG

--bars prints, from one log, every (training row, evaluated source) against
issue 21's Show 1 bars: cold (the model alone; the order mix a fresh serve
predicts with) beside the history and median baselines, MAE at most
history's; and the second half of the online replay as serve predicts it
("mix or mode, by order"), MAE at most 0.9x history's with Acc-5 of 30% or
more.
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
                cells[key]["half n"] = int(m.group("n"))
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


def bars(path):
    cells = parse(path)
    print("cold (all records), Acc-5 / Acc-15 / MAE; the bar: the order mix's MAE at most history's")
    print("| trained on | evaluated on | model alone | order mix (a fresh serve) | history | median | cold bar |")
    print("|---|---|---|---|---|---|---|")
    for k, c in cells.items():
        h = c.get("baseline: history, training median start") or c.get("baseline: history")
        om = c.get("model + order mix")
        ok = "met" if om and h and om[2] <= h[2] else "**not met**"
        print(f"| {k[0]} | {k[1]} | {fmt(c, 'model, not learning')} | {fmt(c, 'model + order mix')} | {fmt(c, 'baseline: history, training median start') if 'baseline: history, training median start' in c else fmt(c, 'baseline: history')} | {fmt(c, 'baseline: median')} | {ok} |")
    print()
    print("second half of the online replay, Acc-5 / MAE (Spearman); the bar: served MAE at most 0.9x history's, Acc-5 30% or more")
    print("| trained on | evaluated on | records | served (mix or mode, by order) | order mix alone | history | served / history | after-learning bar |")
    print("|---|---|---|---|---|---|---|---|")
    for k, c in cells.items():
        s, h = c.get("half mix or mode, by order"), c.get("half history")
        if not s or not h:
            continue
        r = s[2] / h[2]
        miss = [w for w, bad in (("MAE", r > 0.9), ("Acc-5", s[0] < 30)) if bad]
        ok = "met" if not miss else "**not met** (" + ", ".join(miss) + ")"
        print(f"| {k[0]} | {k[1]} | {c.get('half n', '-')} | {fmt(c, 'half mix or mode, by order', False)} ({c.get('rho mix or mode, by order', '-')}) | "
              f"{fmt(c, 'half online + order mix', False)} | {fmt(c, 'half history', False)} | {r:.3f} | {ok} |")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--bars":
        bars(sys.argv[2])
    elif 2 <= len(sys.argv) <= 3:
        main(sys.argv[1:])
    else:
        sys.exit("usage: predictor_cross_table.py LOG [LOG_AFTER] | --bars LOG")
