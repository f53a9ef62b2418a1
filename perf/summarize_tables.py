#!/usr/bin/env python3
"""Medians (min-max) of nccl-tests style tables, several runs per tool, side by side.

    summarize_tables.py --sizes 8,1M,256M LABEL=GLOB [LABEL=GLOB ...]

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
    ap.add_argument("tools", nargs="+", help="LABEL=GLOB")
    args = ap.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    tools = [t.split("=", 1) for t in args.tools]
    print("| size | metric | " + " | ".join(label for label, _ in tools) + " |")
    print("|---|---|" + "---|" * len(tools))
    for size in sizes:
        small = size <= 8
        cells = []
        for _, pattern in tools:
            vals = []
            for path in sorted(glob.glob(pattern)):
                row = {}
                for part in path.split(","):
                    row.update(rows(part))
                if size in row:
                    vals.append(row[size] if small else size / row[size] / 1e3 * args.factor)
            fmt = "{:.2f}" if small else "{:.3f}"
            cells.append((fmt + " (" + fmt + "-" + fmt + ")").format(statistics.median(vals), min(vals), max(vals))
                         if vals else "-")
        print(f"| {name_of(size)} | {'time us' if small else 'busbw GB/s'} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
