#!/usr/bin/env python3
"""The selector's choices judged over several jobs of selector_perf on one shape.

    perf/selector_pool.py [--tolerance 1.10] TABLE.md [TABLE.md ...]

Each TABLE.md is one job's markdown table (selector_tables.sh's job-* parts write one per job). A job's figure for
one algorithm is that of one communicator, and on the 2-core development VM two communicators of the same algorithm
in one job can differ by 1.2x and more; so here every forced algorithm's time at a size is the median over the jobs,
and each algorithm the selector ran is judged by that pooled time against the pooled time of the best one. Per size:
what the selector ran (with counts where the jobs differ), the best algorithm by pooled medians and its time, the
pooled time of each algorithm the selector ran over the best's (marked `**` above --tolerance, unless the two differ
by no more than the tables' 0.1 us), and how many jobs' own choice column was above it. The summary counts the sizes
with a pooled choice above the tolerance.

A last line gives the tables' own noise: in every row the selector's communicator and one forced communicator ran the
same algorithm, and it counts the rows where those two times differ by more than --tolerance either way (and by more
than 0.1 us). Two communicators of one algorithm that far apart say how often a job's table marks a choice that
is not wrong: where two algorithms cost the same, either one's forced copy can come out that much slower.
With two jobs or more, the last line counts per job the sizes where the algorithm the selector ran, forced, was over
--tolerance times the job's best forced time, and the same for an oracle that ran in each job the algorithm with the
least median time over the other jobs: what the jobs' differences alone cost a choice that is right on average.
Exit status 0 either way (1 only for unreadable input).
"""
import argparse
import collections
import statistics
import sys


RESOLUTION_US = 0.1 + 1e-9  # selector_perf prints times to 0.1 us


def beyond(hi, lo, tolerance):
    """Whether time `hi` is over `tolerance` times `lo`, by more than the tables show (0.4 against 0.5 us is not)."""
    return hi > lo * tolerance and hi - lo > RESOLUTION_US


def name_of(size):
    for unit, mult in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= mult and size % mult == 0:
            return f"{size // mult} {unit}"
    return f"{size} B"


def fmt(us):
    return f"{us:.2f}" if us < 10 else f"{us:.1f}" if us < 1000 else f"{us:.0f}"


def read_table(path):
    """{size: {"ran": name, "choice": float or None, "forced": {algo: us}}} of one job's table."""
    rows, header = {}, None
    with open(path) as f:
        for line in f:
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] == "size":
                header = cells
                continue
            if header is None or not cells[0].isdigit():
                continue
            first_algo = header.index("ring / selector") + 1
            forced = {}
            for name, cell in zip(header[first_algo:], cells[first_algo:]):
                try:
                    forced[name] = float(cell)
                except ValueError:
                    pass  # "-": the algorithm does not fit this shape or size
            choice = cells[header.index("choice")].replace("**", "").strip()
            rows[int(cells[0])] = {
                "selector": float(cells[header.index("selector (us)")]),
                "ran": cells[header.index("ran")],
                "choice": float(choice) if choice not in ("", "-") else None,
                "forced": forced,
            }
    if header is None:
        raise ValueError(f"{path}: no selector_perf table")
    return rows


def pooled_medians(rows, algos=None):
    """{algo: median of its forced times over `rows`} (only the algorithms in `algos`, when given)."""
    pooled = collections.defaultdict(list)
    for r in rows:
        for algo, us in r["forced"].items():
            if algos is None or algo in algos:
                pooled[algo].append(us)
    return {a: statistics.median(ts) for a, ts in pooled.items()}


def per_job_marks(jobs, tolerance):
    """Per job, the sizes where the selector's choice, and where an oracle's, ran forced over `tolerance` times the
    job's best forced time. The oracle knows every other job: it runs the algorithm with the least median time over
    them. It scores what the tables' noise alone costs a choice that is right on average."""
    picked, oracle = [], []
    for j, job in enumerate(jobs):
        mine = theirs = 0
        for size, r in job.items():
            if not r["forced"]:
                continue
            best = min(r["forced"].values())
            if r["ran"] in r["forced"]:
                mine += beyond(r["forced"][r["ran"]], best, tolerance)
            others = pooled_medians([o[size] for k, o in enumerate(jobs) if k != j and size in o], r["forced"])
            if others:
                pick = min(others, key=others.get)
                theirs += beyond(r["forced"][pick], best, tolerance)
        picked.append(mine)
        oracle.append(theirs)
    return picked, oracle


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tolerance", type=float, default=1.10)
    ap.add_argument("tables", nargs="+")
    args = ap.parse_args()
    try:
        jobs = [read_table(p) for p in args.tables]
    except (OSError, ValueError) as e:
        print(f"selector_pool: {e}", file=sys.stderr)
        return 1
    sizes = sorted(set().union(*(j.keys() for j in jobs)))
    print(f"# {len(jobs)} jobs; every forced time the median over the jobs")
    print("| size | the selector ran | best (pooled) | best (us) | ran / best (pooled) | jobs whose choice was over "
          f"{args.tolerance:.2f}x |")
    print("|---|---|---|---|---|---|")
    over = 0
    for size in sizes:
        rows = [j[size] for j in jobs if size in j]
        med = pooled_medians(rows)
        if not med:
            continue
        best = min(med, key=med.get)
        ran = collections.Counter(r["ran"] for r in rows)
        judged = []
        for algo in sorted(ran, key=lambda a: -ran[a]):
            if algo in med:
                ratio = med[algo] / med[best]
                judged.append((algo, ratio, beyond(med[algo], med[best], args.tolerance)))
        if any(marked for _, _, marked in judged):
            over += 1
        ran_text = ", ".join(f"{a} x{n}" if len(ran) > 1 else a for a, n in ran.most_common())
        ratio_text = ", ".join(f"{r:.2f}{' **' if m else ''}" + (f" ({a})" if len(judged) > 1 else "")
                               for a, r, m in judged) or "-"
        jobs_over = sum(1 for r in rows if r["choice"] is not None and r["choice"] > args.tolerance)
        print(f"| {name_of(size)} | {ran_text} | {best} | {fmt(med[best])} | {ratio_text} | {jobs_over} of {len(rows)} |")
    print(f"# sizes whose choice, by the pooled medians, ran over {args.tolerance:.2f}x the best: {over} of {len(sizes)}")
    same, apart = 0, 0
    for job in jobs:
        for r in job.values():
            forced = r["forced"].get(r["ran"])
            if forced is None:
                continue
            same += 1
            lo, hi = sorted((forced, r["selector"]))
            apart += beyond(hi, lo, args.tolerance)
    print(f"# the same algorithm on two communicators (the selector's and its forced copy) over {args.tolerance:.2f}x "
          f"apart: {apart} of {same} rows")
    if len(jobs) > 1:
        picked, oracle = per_job_marks(jobs, args.tolerance)
        print(f"# per job, sizes where the algorithm run, forced, was over {args.tolerance:.2f}x the job's best forced: "
              f"the selector's choice {', '.join(map(str, picked))}; an oracle's (in each job the algorithm best by "
              f"the other jobs' pooled medians) {', '.join(map(str, oracle))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
