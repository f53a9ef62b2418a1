"""torch.distributed's all_reduce (strata backend, in place, sum) of one float32 tensor reused call after call, on
torch's own memory ("plain") and on strata_torch.empty's shared memory ("shared"): the median time per call of
the timed calls after a few warm-up calls (a plain tensor passed to STRATA_HUGE_PAGES calls moves onto huge pages,
docs/ALGORITHMS.md), on rank 0, and whether every element came out as the sum. One line per kind:

    PYTHONPATH=build/python /usr/bin/python3 perf/torch_buffers.py --ranks 2 --mib 16 --iters 40
    plain 16 MiB: 0.98 ms per all_reduce (median of 40), 17.1 GB/s busbw, results ok

Run it with STRATA_HUGE_PAGES=0 for plain tensors on ordinary pages. Ranks are spawned from this process.
"""
import argparse
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import strata_torch


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, n, kind, mib, iters, warmup, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(n))
    torch.set_num_threads(1)
    dist.init_process_group("strata", init_method="env://")
    numel = (mib << 20) // 4
    t = strata_torch.empty(numel) if kind == "shared" else torch.empty(numel)
    want = float(n * (n + 1) // 2)
    ok = True
    for _ in range(warmup):
        t.fill_(rank + 1)
        dist.all_reduce(t)
    dist.barrier()
    times = []
    for _ in range(iters):
        t.fill_(rank + 1)
        t0 = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - t0)
        ok = ok and bool((t == want).all())
    times.sort()
    if rank == 0:
        out.put((times[len(times) // 2], ok))
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--mib", type=int, default=16)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--kinds", nargs="+", default=["plain", "shared"], choices=["plain", "shared"])
    a = ap.parse_args()
    if a.ranks < 2 or a.mib < 1 or a.iters < 1 or a.warmup < 0:
        ap.error("--ranks from 2, --mib and --iters from 1, --warmup from 0")
    ctx = mp.get_context("spawn")
    failed = False
    for kind in a.kinds:
        q = ctx.Queue()
        port = free_port()
        procs = [ctx.Process(target=rank_main, args=(r, a.ranks, kind, a.mib, a.iters, a.warmup, port, q))
                 for r in range(a.ranks)]
        for p in procs:
            p.start()
        sec, ok = q.get(timeout=600)
        for p in procs:
            p.join()
        failed = failed or not ok or any(p.exitcode != 0 for p in procs)
        busbw = (a.mib << 20) / sec / 1e9 * 2 * (a.ranks - 1) / a.ranks
        print(f"{kind} {a.mib} MiB: {sec * 1e3:.2f} ms per all_reduce (median of {a.iters}), {busbw:.1f} GB/s busbw, "
              f"results {'ok' if ok else 'WRONG'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
