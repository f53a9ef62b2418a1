#!/usr/bin/env python3
"""One markdown table from one or more --raw files of selector_check.py (e.g. the small and the large
sweep of one configuration), for docs/PERFORMANCE.md.

    perf/selector_report.py [--all] [--tolerance 1.10] RAW.json [RAW.json ...]

Per size: the algorithm the selector's runs named (with counts when the runs differ), the median of
the selector's times, the best forced algorithm and its median, their ratio (marked `**` above
--tolerance) and the ring's median; --all: every forced algorithm's median in place of the ring's.
"""
import argparse
import collections
import json
import statistics


def name_of(size):
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= mult and size % mult == 0:
            return f"{size // mult} {unit}"
    return f"{size} B"


def fmt(us):
    return f"{us:.2f}" if us < 10 else f"{us:.1f}" if us < 1000 else f"{us:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tolerance", type=float, default=1.10)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("raw", nargs="+")
    args = ap.parse_args()
    times, ran = collections.defaultdict(dict), collections.defaultdict(dict)
    for path in args.raw:
        with open(path) as f:
            data = json.load(f)
        for algo, per_size in data["times_us"].items():
            for size, ts in per_size.items():
                times[algo][int(size)] = ts
        for size, names in data.get("ran", {}).get("auto", {}).items():
            ran[int(size)] = names
        for size, names in data.get("chosen", {}).items():  # older files: the set only, no counts
            ran.setdefault(int(size), ["/".join(names)])
    forced_names = [a for a in times if a != "auto"]
    head = ["size", "selector ran", "selector (us)", "best forced", "best (us)", "ratio"]
    head += [f"{a} (us)" for a in forced_names] if args.all else ["ring (us)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for size in sorted(times["auto"]):
        auto = statistics.median(times["auto"][size])
        forced = {a: statistics.median(times[a][size]) for a in forced_names if size in times[a]}
        if not forced:
            continue
        best = min(forced, key=forced.get)
        ratio = auto / forced[best]
        counts = collections.Counter(ran.get(size, ["?"]))
        choice = next(iter(counts)) if len(counts) == 1 else ", ".join(f"{a} x{k}" for a, k in counts.most_common())
        row = [name_of(size), choice, fmt(auto), best, fmt(forced[best]), f"{ratio:.2f}" + (" **" if ratio > args.tolerance else "")]
        shown = forced_names if args.all else ["ring"]
        row += [fmt(forced[a]) if a in forced else "-" for a in shown]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
