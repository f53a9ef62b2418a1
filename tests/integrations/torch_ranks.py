"""Runs a test function on N ranks of a torch.distributed job on this host, for the strata torch tests.

Ranks are forked from this process (torch and strata_torch are imported once), one OS thread of
intra-op parallelism each, with MASTER_ADDR/MASTER_PORT set to a free port of 127.0.0.1. A rank
that raises makes the run raise, with its traceback."""
import os
import socket

import torch
import torch.multiprocessing as mp

import strata_torch  # noqa: F401  (registers the backend before any rank starts)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank, fn, nranks, port, args):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)
    fn(rank, nranks, *args)


def run_ranks(fn, nranks, *args):
    """fn(rank, nranks, *args) on nranks forked processes; returns when all succeeded."""
    mp.start_processes(_rank_main, args=(fn, nranks, free_port(), args), nprocs=nranks, join=True,
                       start_method="fork")
