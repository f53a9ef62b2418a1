#!/usr/bin/env python3
"""Medians (min-max) of nccl-tests style tables, several runs per tool, side by side.

    summarize_tables.py --sizes 8,1M,256M LABEL=GLOB [LABEL=GLOB ...]

--ratio A/B adds a column: the ratio of tool A's figure to tool B's, run by run (the runs paired in the
sorted order of their files, as a part that runs each size by both tools back to back writes them), median
(min-max); for 8-byte rows B's time over A's, so that above 1 A is the faster either way.

Each GLOB names the runs of one tool (their tables share the columns size, count, type, redop, root,
time, algbw, busbw). 8-byte rows report time in us, larger ones out-of-place busbw in GB/s,
recomputed from the time column (the printed columns have two decimals) as
size / time x --factor (2(n-1)/n for allreduce: 1 for 2 ranks, 1.5 for 4).
"""
import argparse
import glob
import statistics

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text):
    text = text.strip()
    if text[-1].upper() in UNITS:
        return int(text[:-1]) * UNITS[text[-1].upper()]
    return int(text)


def name_of(size):
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= mult and size % mult == 0:
            return f"{size // mult} {unit}"
    return f"{size} B"


def rows(path):
    found = {}
    for line in open(path):
        fields = line.split()
        if len(fields) >= 8 and fields[0].isdigit():
            try:
                found[int(fields[0])] = float(fields[5])
            except ValueError:
                pass
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="8,64K,1M,16M,64M,256M")
    ap.add_argument("--factor", type=float, default=1.0, help="busbw / algbw of the collective")
    ap.add_argument("--ratio", default="", help="A/B: a column of A's figure over B's, run by run")
    ap.add_argument("tools", nargs="+", help="LABEL=GLOB")
    args = ap.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    tools = [t.split("=", 1) for t in args.tools]
    labels = [label for label, _ in tools]
    pair = args.ratio.split("/") if args.ratio else []
    if pair and (len(pair) != 2 or not all(p in labels for p in pair)):
        ap.error(f"--ratio {args.ratio}: want A/B, two of the labels {', '.join(labels)}")
    header = labels + ([f"{pair[0]} / {pair[1]}, run by run"] if pair else [])
    print("| size | metric | " + " | ".join(header) + " |")
    print("|---|---|" + "---|" * len(header))
    for size in sizes:
        small = size <= 8
        cells = []
        runs = {}  # label: the figure of each run, None where that run lacks the size
        for label, pattern in tools:
            runs[label] = []
            for path in sorted(glob.glob(pattern)):
                row = {}
                for part in path.split(","):
                    row.update(rows(part))
                runs[label].append((row[size] if small else size / row[size] / 1e3 * args.factor)
                                   if size in row else None)
            vals = [v for v in runs[label] if v is not None]
            fmt = "{:.2f}" if small else "{:.3f}"
            cells.append((fmt + " (" + fmt + "-" + fmt + ")").format(statistics.median(vals), min(vals), max(vals))
                         if vals else "-")
        if pair:
            ratios = [(b / a if small else a / b) for a, b in zip(runs[pair[0]], runs[pair[1]])
                      if a is not None and b is not None and a > 0 and b > 0]
            cells.append("{:.2f}x ({:.2f}-{:.2f})".format(statistics.median(ratios), min(ratios), max(ratios))
                         if ratios else "-")
        print(f"| {name_of(size)} | {'time us' if small else 'busbw GB/s'} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
