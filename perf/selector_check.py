#!/usr/bin/env python3
"""The selector against every forced algorithm, size by size, interleaved run by run.

    perf/selector_check.py [--reps 3] [--collective all_reduce] [--algos ring,tree,rd,rhd,direct]
                           [--min 8] [--max 256M] [--iters 20] [--iters-small 200] [--split 1M]
                           [--warmup 3] [--factor 2] [--raw FILE] -- LAUNCH...

LAUNCH starts the ranks of one job and is followed by the perf tool's path and flags, e.g.
`build/bin/stratarun -n 4` or `bash perf/netns_run.sh 2 2`. Each repetition runs the perf tool once
with the selector's choice and once per algorithm forced through STRATA_ALGO, sweeping sizes by
factors of 2. Per size it prints the median time (over the out-of-place and in-place passes of every repetition) of the selector's choice, the best forced
algorithm's median time, their ratio, and the algorithm the selector ran (the perf tool's `algo`
column). A ratio above --tolerance (1.10) is marked; the exit status is 1 when any size is marked.

An entry of --algos may carry a size cap, `direct@1M`: that algorithm is forced only up to the cap
(beyond it the library would run its fallback, which the list already times under its own name).
--factor sets the step of the sweep above --split (small sizes always step by 2); --raw writes
every time measured, per algorithm and size (out-of-place and in-place, run after run), and the
algorithm each run named, as JSON.
"""
import json
import argparse
import os
import statistics
import subprocess
import sys

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text):
    text = text.strip()
    if text[-1].upper() in UNITS:
        return int(text[:-1]) * UNITS[text[-1].upper()]
    return int(text)


def parse_table(out):
    """{size: ([out-of-place, in-place time in us], algorithm or '')} from an nccl-tests style table."""
    cols, time_cols, rows = None, [], {}
    for line in out.splitlines():
        if line.startswith("#") and "size" in line and "time" in line:
            # The header repeats names for out-of-place then in-place: keep the first of each.
            names = line.lstrip("#").split()
            cols = {}
            for i, name in enumerate(names):
                cols.setdefault(name, i)
            time_cols = [i for i, name in enumerate(names) if name == "time"]
            continue
        if cols is None or line.startswith("#") or not line.strip():
            continue
        parts = line.split()
        if not parts[0].isdigit():
            continue
        size = int(parts[0])
        try:
            times = [float(parts[i]) for i in time_cols if i < len(parts)]  # out-of-place and in-place
        except ValueError:
            # A line of another process's output that ran into the row: the size goes unmeasured in this run.
            print(f"# skipped a row that does not parse: {line!r}", file=sys.stderr)
            continue
        algo = parts[cols["algo"]] if "algo" in cols and cols["algo"] < len(parts) else ""
        rows[size] = (times, algo)
    return rows


def run(launch, tool, flags, algo, collective):
    env = dict(os.environ)
    env.pop("STRATA_ALGO", None)
    if algo != "auto":
        env["STRATA_ALGO"] = f"{collective.replace('_', '')}:{algo}"
    cmd = launch + [tool] + flags
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        print(f"# {algo}: exit {proc.returncode}\n{proc.stdout[-2000:]}", file=sys.stderr)
        return {}
    return parse_table(proc.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--collective", default="all_reduce")
    ap.add_argument("--algos", default="ring,tree,rd,rhd,direct")
    ap.add_argument("--min", default="8")
    ap.add_argument("--max", default="256M")
    ap.add_argument("--iters", type=int, default=20, help="timed iterations above --split")
    ap.add_argument("--iters-small", type=int, default=200, help="timed iterations up to --split")
    ap.add_argument("--split", default="1M")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=1.10)
    ap.add_argument("--factor", type=int, default=2, help="size step above --split")
    ap.add_argument("--raw", help="write every measured time to this JSON file")
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("launch", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    launch = [a for a in args.launch if a != "--"]
    if not launch:
        ap.error("give the launch command after --")
    tool = os.path.join(args.bin, f"{args.collective}_perf")
    # Two sweeps per run: small sizes take many iterations so that their medians are steady, large ones few.
    lo, hi, split = parse_size(args.min), parse_size(args.max), parse_size(args.split)

    def sweeps_upto(top):
        sweeps = []
        if lo <= min(split, top):
            sweeps.append(["-b", str(lo), "-e", str(min(split, top)), "-f", "2", "-n", str(args.iters_small),
                           "-w", str(max(args.warmup, args.iters_small // 10))])
        if top > split:
            start = top  # the largest size below --split's double that reaches top by factors
            while start // args.factor >= max(lo, 2 * split):
                start //= args.factor
            sweeps.append(["-b", str(start), "-e", str(top), "-f", str(args.factor), "-n",
                           str(args.iters), "-w", str(args.warmup)])
        return sweeps

    caps = {"auto": hi}
    for entry in (a for a in args.algos.split(",") if a):
        name, _, cap = entry.partition("@")
        caps[name] = min(hi, parse_size(cap)) if cap else hi
    algos = list(caps)
    times = {a: {} for a in algos}
    chosen = {}
    ran = {a: {} for a in algos}  # per size, the algorithm each run's table named, run by run
    for rep in range(args.reps):
        for algo in algos:
            rows = {}
            for flags in sweeps_upto(caps[algo]):
                rows.update(run(launch, tool, flags, algo, args.collective))
            for size, (ts, name) in rows.items():
                times[algo].setdefault(size, []).extend(ts)
                ran[algo].setdefault(size, []).append(name)
                if algo == "auto" and name:
                    chosen.setdefault(size, set()).add(name)
        print(f"# repetition {rep + 1} of {args.reps} done", file=sys.stderr, flush=True)

    if args.raw:
        with open(args.raw, "w") as f:
            json.dump({"times_us": times, "ran": ran, "chosen": {k: sorted(v) for k, v in chosen.items()}}, f, indent=1)

    marked = 0
    print("| size | selector (us) | ran | best forced (us) | best | ratio | ring (us) | ring / selector |")
    print("|---|---|---|---|---|---|---|---|")
    for size in sorted(times["auto"]):
        auto = statistics.median(times["auto"][size])
        forced = {a: statistics.median(times[a][size]) for a in algos[1:] if size in times[a]}
        if not forced:
            continue
        best = min(forced, key=forced.get)
        ratio = auto / forced[best] if forced[best] > 0 else float("inf")
        flag = " **" if ratio > args.tolerance else ""
        marked += ratio > args.tolerance
        ran = "/".join(sorted(chosen.get(size, {"?"})))
        ring = forced.get("ring")
        ring_cells = f"{ring:.1f} | {ring / auto:.2f}" if ring and auto > 0 else "- | -"
        print(f"| {size} | {auto:.1f} | {ran} | {forced[best]:.1f} | {best} | {ratio:.2f}{flag} | {ring_cells} |")
    print(f"# sizes over {args.tolerance:.2f}x the best forced algorithm: {marked}")
    return 1 if marked else 0


if __name__ == "__main__":
    sys.exit(main())
