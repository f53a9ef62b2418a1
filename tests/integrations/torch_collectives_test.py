"""Every collective of the strata torch backend against the gloo backend, on the same inputs, in the
same processes: the default group is strata (env:// init), a second group over the same ranks is gloo.
Where gloo (torch 1.13) lacks an operation, the reference is built from gloo operations it has:
reduce-scatter from gloo's allreduce, AVG from gloo's SUM, the tensor forms from the list forms.

    PYTHONPATH=build/python /usr/bin/python3 tests/integrations/torch_collectives_test.py NRANKS"""
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.testing import assert_close

from torch_ranks import run_ranks

SIZES = [1, 1000, 100003]  # one element, small, odd and above one pipeline chunk
REDUCE_TYPES = [torch.float32, torch.float64, torch.int32, torch.int64, torch.int8, torch.uint8, torch.float16,
                torch.bfloat16]
OPS = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]


def make_input(rank, numel, dtype, salt=0):
    """Small values that every reduction represents exactly (products stay in range for 4 ranks)."""
    g = torch.Generator().manual_seed(1000 * rank + 17 * salt + numel)
    if dtype.is_floating_point:
        return (torch.randint(-4, 5, (numel,), generator=g) / 2).to(dtype)
    lo = 0 if dtype == torch.uint8 else -3
    return torch.randint(lo, 4, (numel,), generator=g, dtype=torch.int64).to(dtype)


def same(actual, expected, what):
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} vs {expected.dtype}"
    if actual.dtype.is_floating_point:
        assert_close(actual.double(), expected.double(), rtol=1e-6, atol=1e-6, msg=lambda m: f"{what}: {m}")
    else:
        assert torch.equal(actual, expected), f"{what}: strata {actual[:8]} vs gloo {expected[:8]}"


def check_all_reduce(rank, n, gloo):
    for dtype in REDUCE_TYPES:
        for numel in SIZES:
            for k, op in enumerate(OPS):
                if op == dist.ReduceOp.PRODUCT and dtype in (torch.float16, torch.bfloat16, torch.int8, torch.uint8):
                    continue  # 4-rank products of these inputs leave the exact range of the type
                x = make_input(rank, numel, dtype, k)
                mine = x.clone()
                dist.all_reduce(mine, op=op)
                # gloo has no bfloat16: its float64 result, exact for these inputs, rounded once.
                ref = x.clone() if dtype != torch.bfloat16 else x.double()
                dist.all_reduce(ref, op=op, group=gloo)
                same(mine, ref.to(dtype), f"all_reduce {dtype} {numel} {op}")
    # AVG: gloo has none; its SUM divided by the rank count.
    for dtype in (torch.float32, torch.float64):
        x = make_input(rank, 1000, dtype)
        mine, ref = x.clone(), x.clone()
        dist.all_reduce(mine, op=dist.ReduceOp.AVG)
        dist.all_reduce(ref, group=gloo)
        same(mine, ref / n, f"all_reduce AVG {dtype}")
    # bool: SUM is a logical or (as with NCCL).
    b = torch.tensor([rank == 0, False, True])
    dist.all_reduce(b)
    assert b.tolist() == [True, False, True], b


def check_all_reduce_coalesced(rank, n, gloo):
    xs = [make_input(rank, k, torch.float32, k) for k in (3, 1000, 7)]
    mine, ref = [x.clone() for x in xs], [x.clone() for x in xs]
    dist.all_reduce_coalesced(mine)
    dist.all_reduce_coalesced(ref, group=gloo)
    for m, r in zip(mine, ref):
        same(m, r, "all_reduce_coalesced")


def check_broadcast_reduce(rank, n, gloo):
    for root in range(n):
        for dtype in (torch.float32, torch.int64):
            x = make_input(rank, 1001, dtype, root)
            mine, ref = x.clone(), x.clone()
            dist.broadcast(mine, src=root)
            dist.broadcast(ref, src=root, group=gloo)
            same(mine, ref, f"broadcast root {root}")
            mine, ref = x.clone(), x.clone()
            dist.reduce(mine, dst=root, op=dist.ReduceOp.MAX)
            dist.reduce(ref, dst=root, op=dist.ReduceOp.MAX, group=gloo)
            if rank == root:  # only the root's result is defined
                same(mine, ref, f"reduce root {root}")


def check_gathers(rank, n, gloo):
    for numel in (1, 999):
        x = make_input(rank, numel, torch.float32)
        mine = [torch.empty(numel) for _ in range(n)]
        ref = [torch.empty(numel) for _ in range(n)]
        dist.all_gather(mine, x)
        dist.all_gather(ref, x, group=gloo)
        for i in range(n):
            same(mine[i], ref[i], f"all_gather block {i}")
        flat = torch.empty(n * numel)
        dist.all_gather_into_tensor(flat, x)  # _allgather_base
        same(flat, torch.cat(ref), "all_gather_into_tensor")
        root = n - 1
        mine = [torch.empty(numel) for _ in range(n)] if rank == root else None
        ref = [torch.empty(numel) for _ in range(n)] if rank == root else None
        dist.gather(x, mine, dst=root)
        dist.gather(x, ref, dst=root, group=gloo)
        if rank == root:
            for i in range(n):
                same(mine[i], ref[i], f"gather block {i}")
        chunks = [make_input(i, numel, torch.float32, 5) for i in range(n)] if rank == 0 else None
        mine, ref = torch.empty(numel), torch.empty(numel)
        dist.scatter(mine, chunks, src=0)
        dist.scatter(ref, chunks, src=0, group=gloo)
        same(mine, ref, "scatter")


def check_reduce_scatter(rank, n, gloo):
    for numel in (1, 1000, 25001):
        for k, op in enumerate((dist.ReduceOp.SUM, dist.ReduceOp.MAX)):
            blocks = [make_input(rank, numel, torch.float32, 10 * i + k) for i in range(n)]
            full = torch.cat(blocks)
            dist.all_reduce(full, op=op, group=gloo)
            expected = full.view(n, numel)[rank]
            mine = torch.empty(numel)
            dist.reduce_scatter(mine, [b.clone() for b in blocks], op=op)
            same(mine, expected, f"reduce_scatter {numel} {op}")
            mine = torch.empty(numel)
            dist.reduce_scatter_tensor(mine, torch.cat(blocks), op=op)  # _reduce_scatter_base
            same(mine, expected, f"reduce_scatter_tensor {numel} {op}")


def check_all_to_all(rank, n, gloo):
    # Equal blocks, then uneven splits (rank r sends p+r+1 rows of 3 to rank p; some are empty).
    x = make_input(rank, n * 1000, torch.float32)
    mine, ref = torch.empty_like(x), torch.empty_like(x)
    dist.all_to_all_single(mine, x)
    dist.all_to_all_single(ref, x, group=gloo)
    same(mine, ref, "all_to_all_single equal")
    rows = lambda src, dst: (src + dst + 1) % 3  # noqa: E731
    in_splits = [rows(rank, p) for p in range(n)]
    out_splits = [rows(p, rank) for p in range(n)]
    x = make_input(rank, 3 * sum(in_splits), torch.float32, 1).view(-1, 3)
    mine, ref = torch.empty(sum(out_splits), 3), torch.empty(sum(out_splits), 3)
    dist.all_to_all_single(mine, x, out_splits, in_splits)
    dist.all_to_all_single(ref, x, out_splits, in_splits, group=gloo)
    same(mine, ref, "all_to_all_single with splits")
    # The list form (tensors of different sizes), against gloo's single form with splits.
    ins = list(x.split(in_splits))
    outs = [torch.empty(k, 3) for k in out_splits]
    dist.all_to_all(outs, [t.contiguous() for t in ins])
    same(torch.cat(outs), ref, "all_to_all")


def check_send_recv(rank, n, gloo):
    # A ring: even ranks send first, odd ranks receive first (each call blocks in issue order).
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    x = make_input(rank, 50000, torch.float32)
    for group in (None, gloo):
        got = torch.empty_like(x)
        if rank % 2 == 0:
            dist.send(x, nxt, group=group)
            dist.recv(got, prv, group=group)
        else:
            dist.recv(got, prv, group=group)
            dist.send(x, nxt, group=group)
        same(got, make_input(prv, 50000, torch.float32), f"recv from {prv} ({'gloo' if group else 'strata'})")
    dist.barrier()


def check_async_and_futures(rank, n, gloo):
    # Several operations in flight, completed in issue order; futures chain as DDP hooks use them.
    xs = [make_input(rank, 4096, torch.float32, i) for i in range(8)]
    refs = [x.clone() for x in xs]
    works = [dist.all_reduce(x, async_op=True) for x in xs]
    futs = [w.get_future().then(lambda f: f.value()[0] * 2) for w in works]
    for r in refs:
        dist.all_reduce(r, group=gloo)
    for w, x, r, f in zip(works, xs, refs, futs):
        w.wait()
        assert w.is_completed()
        same(x, r, "async all_reduce")
        same(f.wait(), r * 2, "future.then")


def check_subgroup(rank, n, gloo):
    # A strata group of the even ranks: its own communicator, made through the store under a new prefix.
    evens = list(range(0, n, 2))
    group = dist.new_group(evens, backend="strata")
    if rank in evens:
        x = torch.full((5,), float(rank))
        dist.all_reduce(x, group=group)
        assert x.tolist() == [float(sum(evens))] * 5, x


def check_groups_at_once(rank, n, gloo):
    # Two more strata groups over every rank: each has its communicator and worker thread, so asynchronous
    # all_reduces issued to the three groups in turn run at once. Each group's tensors have their own scale, so a
    # result that went to the wrong group shows; the sums are checked against gloo's.
    groups = [None, dist.new_group(backend="strata"), dist.new_group(backend="strata")]
    for it in range(5):
        pending = []
        for k, group in enumerate(groups):
            for numel in (1, 1000, 300_000):  # 1.2 MB: past the FIFO's slots
                x = make_input(rank, numel, torch.float32, it) * (10 ** k)
                pending.append((x.clone(), x, dist.all_reduce(x, group=group, async_op=True), k, numel))
        for original, x, work, k, numel in pending:
            work.wait()
            dist.all_reduce(original, group=gloo)
            same(x, original, f"all_reduce at once, group {k}, {numel}")


def check_quantized(rank, n, gloo):
    # A group with a quantization spec (pg_options), its ranks split into two hosts by STRATA_HOSTID (read
    # when the group's communicator is made): all_reduce runs quantized, within int8's bound of gloo's exact
    # sum, and bit-identical on every rank. On one host the same group stays exact.
    import strata_torch
    torch.manual_seed(1234 + rank)
    x = torch.randn(300_000)  # 1.2 MB: above STRATA_QUANT_MIN_BYTES
    exact = x.clone()
    dist.all_reduce(exact, group=gloo)
    for hosts in (1, 2):
        os.environ["STRATA_HOSTID"] = f"quant-host{rank * hosts // n}"
        group = dist.new_group(backend="strata", pg_options=strata_torch.Options(quant="int8:128"))
        y = x.clone()
        dist.all_reduce(y, group=group)
        err = ((y.double() - exact.double()).norm() / exact.double().norm()).item()
        if hosts == 1:
            assert err < 1e-6, f"one host: error {err}, expected the exact path"
        else:
            assert 1e-6 < err < 0.01, f"two hosts: relative error {err}, expected int8:128's (0, 1%)"
            everyone = [torch.empty_like(y) for _ in range(n)]
            dist.all_gather(everyone, y, group=gloo)
            assert all(torch.equal(everyone[0], e) for e in everyone), "ranks differ"
    del os.environ["STRATA_HOSTID"]


def check_shared_tensors(rank, n, gloo):
    """Tensors from strata_torch.empty (strataMemAlloc): the same results as gloo on ordinary tensors, 5 MiB (above
    the size from which calls on every rank's shared buffers run in place) and small, in and out of place; sizes and
    dtype as torch.empty gives them; memory freed with the tensor."""
    import strata_torch
    assert strata_torch.empty(2, 3).shape == (2, 3) and strata_torch.empty((4,), dtype=torch.int32).dtype == torch.int32
    assert strata_torch.empty(0).numel() == 0
    for bad in ((-1,), (2 ** 40, 2 ** 40)):
        try:
            strata_torch.empty(*bad)
            raise AssertionError(f"strata_torch.empty{bad} accepted")
        except ValueError as e:
            assert "strata_torch.empty" in str(e), e
    for numel in (1000, 5 * 2 ** 20 // 4 + 3):
        for k in range(3):  # new tensors each time: buffers freed and allocated again
            x = make_input(rank, numel, torch.float32, k)
            mine = strata_torch.empty(numel)
            mine.copy_(x)
            dist.all_reduce(mine)
            ref = x.clone()
            dist.all_reduce(ref, group=gloo)
            same(mine, ref, f"all_reduce of a shared tensor, {numel} elements")
            out = strata_torch.empty(numel * n)
            dist.all_gather_into_tensor(out, strata_torch.empty(numel).copy_(x))
            parts = [torch.empty_like(x) for _ in range(n)]
            dist.all_gather(parts, x, group=gloo)
            same(out, torch.cat(parts), f"all_gather into a shared tensor, {numel} elements")
            del mine, out


def thread_nices():
    """{thread id: nice value} of this process's threads (/proc/self/task/*/stat, field 19)."""
    nices = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                nices[int(tid)] = int(f.read().rsplit(")", 1)[1].split()[16])
        except FileNotFoundError:
            pass  # a thread that ended meanwhile
    return nices


def check_worker_priority(rank, n, gloo):
    # Each strata group's worker thread runs at the creating thread's nice value plus worker_nice; every
    # other thread a group starts keeps the creator's. Lowering the priority is always allowed; raising it
    # needs root or CAP_SYS_NICE, and without them the worker keeps the creator's value.
    import strata_torch
    import subprocess
    base = os.getpriority(os.PRIO_PROCESS, 0)
    # Whether this process may raise a priority, asked of the kernel by a child that tries (root in a container
    # without CAP_SYS_NICE may not).
    probe = "import os; os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) - 1)"
    may_raise = subprocess.run([sys.executable, "-c", probe], stderr=subprocess.DEVNULL).returncode == 0
    for offset in (5, -3, 0):
        before = thread_nices()
        group = dist.new_group(backend="strata", pg_options=strata_torch.Options(worker_nice=offset))
        x = torch.ones(4)
        dist.all_reduce(x, group=group)  # the worker has run a job
        assert x.tolist() == [float(n)] * 4
        started = sorted(nice for tid, nice in thread_nices().items() if tid not in before)
        expect = min(19, max(-20, base + offset)) if offset > 0 or may_raise else base
        assert expect in started, f"worker_nice={offset}: new threads' nice values {started}, base {base}"
        others = list(started)
        others.remove(expect)
        assert all(nice == base for nice in others), f"worker_nice={offset}: {started}, base {base}"
    try:
        dist.new_group(backend="strata", pg_options=strata_torch.Options(worker_nice=40))
    except RuntimeError as e:
        assert "worker_nice must be from -39 to 39, got 40" in str(e), f"unexpected message: {e}"
    else:
        raise AssertionError("worker_nice=40 was accepted")


def check_errors(rank, n, gloo):
    # Checked before anything is queued, so every rank raises the same error and the group stays usable.
    cases = [
        (lambda: dist.all_reduce(torch.zeros(4, dtype=torch.int16)), "dtype"),
        (lambda: dist.all_reduce(torch.zeros(4, dtype=torch.int32), op=dist.ReduceOp.BXOR), "reduce op"),
        (lambda: dist.all_reduce(torch.zeros(4, 4).t()), "contiguous"),
        (lambda: dist.all_to_all_single(torch.zeros(n * 2 + 1), torch.zeros(n * 2 + 1)), "equal blocks"),
    ]
    for call, words in cases:
        try:
            call()
        except RuntimeError as e:
            assert "strata" in str(e) and words in str(e), f"unexpected message: {e}"
        else:
            raise AssertionError(f"no error for a call that should fail ({words})")
    x = torch.ones(3)
    dist.all_reduce(x)
    assert x.tolist() == [float(n)] * 3


CHECKS = [check_all_reduce, check_all_reduce_coalesced, check_broadcast_reduce, check_gathers, check_reduce_scatter,
          check_all_to_all, check_send_recv, check_async_and_futures, check_subgroup, check_groups_at_once, check_quantized,
          check_worker_priority,
          check_shared_tensors, check_errors]


def rank_main(rank, n):
    dist.init_process_group("strata", init_method="env://", rank=rank, world_size=n, timeout=timedelta(seconds=60))
    assert dist.get_backend() == "strata"
    gloo = dist.new_group(backend="gloo")
    for check in CHECKS:
        check(rank, n, gloo)
        if rank == 0:
            print(f"{check.__name__}: ok", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    nranks = int(sys.argv[1])
    run_ranks(rank_main, nranks)
    print(f"torch collectives: strata matches gloo on {nranks} ranks")
