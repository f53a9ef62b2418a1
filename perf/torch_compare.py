"""torch.distributed with the strata backend against the gloo backend, in the same processes and the
same run, interleaved (strata, gloo, strata, gloo, ...):

1. all_reduce of a 64 MiB float32 tensor (sum): time per call, algbw and busbw (nccl-tests' factor
   2(n-1)/n); the result is checked after every timed loop.
2. DDP training step of a ~25M-parameter MLP (default buckets, SGD): wall time per step, and the
   time in communication per step from the profiler: the wall time during which at least one of the
   backend's all_reduce events ("strata:all_reduce", "gloo:all_reduce"; each spans the call to its
   completion on the backend's thread) was open. Each rank's figure includes the time it waited for
   later ranks to call the same all_reduce; the ranks' compute drifts apart by tens of milliseconds a
   step (over 100 with 4 ranks on 2 cores), and that wait is the same whatever the backend. So the
   table also shows the time in all_reduce once every rank has called it: the union of the intervals
   from the last rank's call of each all_reduce to its last completion, on a clock every rank shares.

Every figure is the slowest rank's; each repetition prints a line and the end a table of medians
(min-max). Ranks are forked from this process, one intra-op thread each (as torchrun sets).

    PYTHONPATH=build/python /usr/bin/python3 perf/torch_compare.py --ranks 2 4 --reps 3
"""
import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import strata_torch  # noqa: F401  (registers the "strata" backend)

BACKENDS = ("strata", "gloo")


def slowest(value, group):
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
    return t.item()


def bench_allreduce(groups, n, args, results):
    numel = args.allreduce_mib * (1 << 20) // 4
    x = torch.empty(numel)
    for rep in range(args.reps):
        for name in BACKENDS:
            g = groups[name]
            x.fill_(1.0)
            for _ in range(args.warmup):
                dist.all_reduce(x, group=g)
            x.fill_(1.0)
            dist.barrier(group=g)
            start = time.perf_counter()
            for _ in range(args.iters):
                dist.all_reduce(x, group=g)
            elapsed = (time.perf_counter() - start) / args.iters
            # 1 summed over n ranks, iters times: n ** iters everywhere (exact in float32 for these sizes).
            if not bool((x == float(n) ** args.iters).all()):
                raise RuntimeError(f"{name}: wrong allreduce result")
            t = slowest(elapsed, groups["gloo"])
            results.setdefault(f"allreduce_{name}_ms", []).append(t * 1e3)
            algbw = numel * 4 / t / 1e9
            results.setdefault(f"allreduce_{name}_busbw", []).append(algbw * 2 * (n - 1) / n)
            if dist.get_rank() == 0:
                print(f"  rep {rep} allreduce {args.allreduce_mib} MiB {name:6s}: {t * 1e3:8.2f} ms  "
                      f"busbw {algbw * 2 * (n - 1) / n:6.3f} GB/s", flush=True)


def union_length(intervals):
    """The length of the union of (start, end) intervals: overlapping ones count once."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def in_flight_ms(prof, event_name):
    """Wall time during which at least one `event_name` event was open: the union of the events'
    intervals, so that buckets queued behind each other are not counted twice."""
    return union_length((e.time_range.start, e.time_range.end) for e in prof.events() if e.name == event_name) / 1e3


def event_spans(prof, event_name, marker):
    """This rank's `event_name` events as (start, end) in seconds of time.monotonic(), in call order:
    `marker` is the monotonic time at which the profiler's "sync" event began."""
    events = [e for e in prof.events() if e.name in (event_name, "sync")]
    sync = next(e for e in events if e.name == "sync")
    shift = marker - sync.time_range.start / 1e6
    return sorted((e.time_range.start / 1e6 + shift, e.time_range.end / 1e6 + shift) for e in events
                  if e.name == event_name)


def all_in_ms(spans_per_rank):
    """The wall time during which an all_reduce that every rank had called was still in flight: the
    union, over the calls, of [the last rank's call, the last rank's completion]. Every rank issues the
    same calls in the same order, so the k-th span of each rank belongs to the k-th call."""
    calls = min(len(s) for s in spans_per_rank)
    return union_length((max(s[k][0] for s in spans_per_rank), max(s[k][1] for s in spans_per_rank))
                        for k in range(calls)) * 1e3


def make_mlp():
    # 1024 -> 4096 -> 4096 -> 1024: 25.2M parameters.
    return torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096),
                               torch.nn.ReLU(), torch.nn.Linear(4096, 1024))


def bench_ddp(groups, n, args, results):
    from torch.nn.parallel import DistributedDataParallel as DDP

    models = {}
    for name in BACKENDS:
        torch.manual_seed(0)
        ddp = DDP(make_mlp(), process_group=groups[name])
        models[name] = (ddp, torch.optim.SGD(ddp.parameters(), lr=1e-3))
    nparams = sum(p.numel() for p in models["strata"][0].parameters())
    data = torch.Generator().manual_seed(dist.get_rank())
    x = torch.randn(args.batch, 1024, generator=data)
    y = torch.randn(args.batch, 1024, generator=data)

    def step(name):
        ddp, opt = models[name]
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    for rep in range(args.reps):
        for name in BACKENDS:
            g = groups[name]
            for _ in range(args.ddp_warmup):
                step(name)
            dist.barrier(group=g)
            start = time.perf_counter()
            for _ in range(args.ddp_steps):
                step(name)
            per_step = slowest((time.perf_counter() - start) / args.ddp_steps, groups["gloo"])
            # The same steps again under the profiler, for the time in the backend's all_reduce.
            dist.barrier(group=g)
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                with torch.profiler.record_function("sync"):
                    marker = time.monotonic()
                for _ in range(args.ddp_steps):
                    step(name)
            event = f"{name}:all_reduce"
            comm = slowest(in_flight_ms(prof, event) / args.ddp_steps, groups["gloo"])
            spans = [None] * n
            dist.all_gather_object(spans, event_spans(prof, event, marker), group=groups["gloo"])
            all_in = all_in_ms(spans) / args.ddp_steps
            results.setdefault(f"ddp_{name}_step_ms", []).append(per_step * 1e3)
            results.setdefault(f"ddp_{name}_comm_ms", []).append(comm)
            results.setdefault(f"ddp_{name}_allin_ms", []).append(all_in)
            if dist.get_rank() == 0:
                print(f"  rep {rep} DDP {nparams / 1e6:.1f}M params {name:6s}: {per_step * 1e3:8.1f} ms/step, "
                      f"in all_reduce {comm:8.1f} ms/step (profiler), {all_in:8.1f} once every rank called it",
                      flush=True)


def rank_main(rank, n, port, args, out_path):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)
    dist.init_process_group("strata", rank=rank, world_size=n)
    groups = {"strata": dist.group.WORLD, "gloo": dist.new_group(backend="gloo")}
    results = {}
    if "allreduce" in args.only:
        bench_allreduce(groups, n, args, results)
    if "ddp" in args.only:
        bench_ddp(groups, n, args, results)
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump(results, f)
    dist.destroy_process_group()


def summary(values):
    return f"{statistics.median(values):.3g} ({min(values):.3g}-{max(values):.3g})"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    p.add_argument("--reps", type=int, default=3, help="interleaved repetitions per backend")
    p.add_argument("--allreduce-mib", type=int, default=64)
    p.add_argument("--iters", type=int, default=10, help="timed all_reduce calls per repetition")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--ddp-steps", type=int, default=3, help="timed (and then profiled) steps per repetition")
    p.add_argument("--ddp-warmup", type=int, default=1)
    p.add_argument("--batch", type=int, default=8, help="samples per rank and step")
    p.add_argument("--only", nargs="+", default=["allreduce", "ddp"], choices=["allreduce", "ddp"])
    p.add_argument("--json", help="write every measurement here")
    args = p.parse_args()

    report = {}
    for n in args.ranks:
        cpus = os.cpu_count()
        note = f", oversubscribed: {n} ranks on {cpus} CPUs" if n > cpus else ""
        print(f"== {n} ranks{note}", flush=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            mp.start_processes(rank_main, args=(n, port, args, out.name), nprocs=n, join=True, start_method="fork")
            report[n] = json.load(open(out.name))

    # strata's advantage: gloo's time over strata's, strata's bandwidth over gloo's (above 1: strata ahead).
    print("\n| ranks | metric | strata | gloo | strata's advantage |\n|---|---|---|---|---|")
    rows = [("allreduce", "ms", f"all_reduce {args.allreduce_mib} MiB, ms", False),
            ("allreduce", "busbw", f"all_reduce {args.allreduce_mib} MiB, busbw GB/s", True),
            ("ddp", "step_ms", "DDP step, ms", False),
            ("ddp", "comm_ms", "DDP time in all_reduce per step (profiler), ms", False),
            ("ddp", "allin_ms", "DDP time in all_reduce per step once every rank called it, ms", False)]
    for n, res in report.items():
        for kind, metric, label, higher_is_better in rows:
            s, g = res.get(f"{kind}_strata_{metric}"), res.get(f"{kind}_gloo_{metric}")
            if s and g:
                ratio = statistics.median(s) / statistics.median(g)
                print(f"| {n} | {label} | {summary(s)} | {summary(g)} | "
                      f"{ratio if higher_is_better else 1 / ratio:.2f}x |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({str(k): v for k, v in report.items()}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
