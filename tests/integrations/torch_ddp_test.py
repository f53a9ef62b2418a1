"""DDP training with the strata backend against the same training with gloo: same seed, same data,
50 steps; every rank's loss must agree within 1e-5 relative at every step. The strata default group is
made from an explicit c10d store (store-based init); the gloo group is a second group over the same
ranks. A third run registers a Python communication hook on strata (futures from Python), and small
buckets keep several allreduces in flight per step.

    PYTHONPATH=build/python /usr/bin/python3 tests/integrations/torch_ddp_test.py NRANKS"""
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

from torch_ranks import run_ranks

STEPS = 50
RTOL = 1e-5


def train(rank, group, hook=None):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 1))
    ddp = DDP(model, process_group=group, bucket_cap_mb=0.005)  # ~5 KB buckets: several per step
    if hook is not None:
        ddp.register_comm_hook(group, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.02, momentum=0.9)
    data = torch.Generator().manual_seed(100 + rank)  # each rank its own batches: the gradients differ
    target = torch.linspace(-1, 1, 16).unsqueeze(1)  # a function the model can learn in 50 steps
    losses = []
    for _ in range(STEPS):
        x = torch.randn(32, 16, generator=data)
        y = torch.tanh(x @ target)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def rank_main(rank, n):
    store = dist.TCPStore("127.0.0.1", int(os.environ["MASTER_PORT"]), n, rank == 0, timeout=timedelta(seconds=60))
    dist.init_process_group("strata", store=store, rank=rank, world_size=n, timeout=timedelta(seconds=60))
    gloo = dist.new_group(backend="gloo")
    runs = {
        "strata": train(rank, None),
        "gloo": train(rank, gloo),
        "strata + Python hook": train(rank, None, default_hooks.allreduce_hook),
    }
    ref, ref_params = runs["gloo"]
    for name, (losses, params) in runs.items():
        for step, (a, b) in enumerate(zip(losses, ref)):
            assert abs(a - b) <= RTOL * abs(b), f"rank {rank} {name} step {step}: loss {a!r}, gloo {b!r}"
        # DDP kept the replicas identical: rank 0's parameters everywhere.
        first = params.clone()
        dist.broadcast(first, src=0, group=gloo)
        assert torch.equal(first, params), f"rank {rank} {name}: parameters differ from rank 0's"
    if rank == 0:
        worst = max(abs(a - b) / abs(b) for name, (ls, _) in runs.items() for a, b in zip(ls, ref))
        print(f"DDP {n} ranks, {STEPS} steps: losses {ref[0]:.5f} -> {ref[-1]:.5f}; "
              f"largest relative difference from gloo {worst:.2e}")
    dist.destroy_process_group()


if __name__ == "__main__":
    nranks = int(sys.argv[1])
    run_ranks(rank_main, nranks)
    print(f"DDP: strata matches gloo on {nranks} ranks")
