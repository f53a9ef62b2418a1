"""strata under torch.distributed: every rank adds its rank number, then averages a tensor
asynchronously, and checks both. With build/python on PYTHONPATH:

    PYTHONPATH=build/python /usr/bin/python3 examples/torch_allreduce.py 4     # starts 4 ranks itself
    torchrun --nproc_per_node 4 examples/torch_allreduce.py                   # or under a launcher
"""
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import strata_torch  # noqa: F401  (registers the "strata" backend)


def main(rank, nranks):
    # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the launcher (or from __main__ below)
    dist.init_process_group("strata", rank=rank, world_size=nranks)

    total = torch.full((1000,), float(rank))
    dist.all_reduce(total)  # blocks until the sum is in place

    mean = torch.arange(1000, dtype=torch.float32) * (rank + 1)
    work = dist.all_reduce(mean, op=dist.ReduceOp.AVG, async_op=True)  # returns at once
    work.wait()

    ok = bool((total == nranks * (nranks - 1) / 2).all()) and torch.allclose(
        mean, torch.arange(1000, dtype=torch.float32) * (nranks + 1) / 2)
    if rank == 0:
        print(f"strata allreduce over {nranks} torch ranks: sum {total[0].item():g}, average ok: {ok}")
    dist.destroy_process_group()
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    if "RANK" in os.environ:  # started by a launcher: this process is one rank
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    else:  # start the ranks here, on a free port of this host
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(s.getsockname()[1]))
        n = int(sys.argv[1]) if len(sys.argv) > 1 else 2
        mp.spawn(main, args=(n,), nprocs=n)
