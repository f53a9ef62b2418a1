"""strata as a torch.distributed backend for CPU tensors.

    import strata_torch                    # registers the backend "strata"
    import torch.distributed as dist
    dist.init_process_group("strata", init_method="env://")      # or store=..., rank=..., world_size=...

Every process group made with the backend exchanges a strata unique id through the group's c10d
store (rank 0 makes it) and runs its collectives in issue order on one worker thread. Per-group
settings: ``pg_options=strata_torch.Options(...)``. See docs/INTEGRATIONS.md.
"""
import atexit
import inspect

import torch
import torch.distributed as dist

from . import _C

__all__ = ["BACKEND_NAME", "Options", "empty", "strata_version"]

BACKEND_NAME = "strata"


class Options:
    """Settings of one strata process group; None keeps the library's own (its STRATA_* variable,
    else its default). The communicator's timeout is the process group's ``timeout``.

    nchannels:        ring channels (STRATA_NCHANNELS)
    shm_disable:      True: TCP even between ranks of one host (STRATA_SHM_DISABLE)
    sockets_per_peer: TCP sockets per peer and channel (STRATA_NSOCKS_PERPEER)
    comm_name:        name shown in strata's log lines
    quant:            quantization spec for the group's eligible calls (sum/avg of float32, float16,
                      bfloat16 all_reduce, reduce_scatter, all_gather), e.g. "int8:128"; "none" turns
                      STRATA_QUANT off for this group (strataConfig_t.quant; docs/QUANTIZATION.md)
    worker_nice:      added to the nice value of the thread that makes the group, for the group's
                      worker thread (STRATA_TORCH_WORKER_NICE, default -10: the worker, which sleeps
                      when idle, runs ahead of compute threads while a collective is in flight); -39
                      to 39, 0 keeps the creator's priority; raising it needs root, CAP_SYS_NICE or
                      RLIMIT_NICE, and a refused request leaves the creator's priority with a warning

    Settings the library reads at communicator init from the environment (STRATA_QUANT among them)
    apply to every group without its own; set them before init_process_group.
    """

    def __init__(self, nchannels=None, shm_disable=None, sockets_per_peer=None, comm_name=None, quant=None,
                 worker_nice=None):
        self.nchannels = nchannels
        self.shm_disable = shm_disable
        self.sockets_per_peer = sockets_per_peer
        self.comm_name = comm_name
        self.quant = quant
        self.worker_nice = worker_nice

    def _to_c(self):
        c = _C._BackendOptions()
        if self.nchannels is not None:
            c.nchannels = int(self.nchannels)
        if self.shm_disable is not None:
            c.shm_disable = int(bool(self.shm_disable))
        if self.sockets_per_peer is not None:
            c.sockets_per_peer = int(self.sockets_per_peer)
        if self.comm_name is not None:
            c.comm_name = str(self.comm_name)
        if self.quant is not None:
            c.quant = str(self.quant)
        if self.worker_nice is not None:
            c.worker_nice = int(self.worker_nice)
        return c

    def __repr__(self):
        return (f"strata_torch.Options(nchannels={self.nchannels}, shm_disable={self.shm_disable}, "
                f"sockets_per_peer={self.sockets_per_peer}, comm_name={self.comm_name!r}, quant={self.quant!r}, "
                f"worker_nice={self.worker_nice})")


def strata_version():
    """The strata library's version code (major * 10000 + minor * 100 + patch)."""
    return _C.STRATA_VERSION


def empty(*size, dtype=torch.float32):
    """A CPU tensor on memory from strataMemAlloc, which the ranks of one host map into each other: collectives on
    such tensors, on every rank, reach the peers' memory with loads and stores (docs/INTEGRATIONS.md). Its memory is
    freed when torch drops the tensor. Sizes as torch.empty takes them: empty(2, 3) or empty((2, 3))."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        size = tuple(size[0])
    return _C._empty_shared(torch.empty(0, dtype=dtype), [int(s) for s in size])


def _create_backend(dist_backend_opts, pg_options):
    options = pg_options if pg_options is not None else Options()
    if not isinstance(options, Options):
        raise TypeError(f"strata: pg_options must be a strata_torch.Options, not {type(options).__name__}")
    return _C._create_backend(dist_backend_opts.store, dist_backend_opts.group_rank, dist_backend_opts.group_size,
                              dist_backend_opts.timeout, options._to_c())


def _register():
    if BACKEND_NAME.upper() in dist.Backend._plugins:
        return  # a second import (e.g. reloading) keeps the first registration
    # torch 2.x asks which devices a backend serves; 1.x has no such parameter.
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        dist.Backend.register_backend(BACKEND_NAME, _create_backend, extended_api=True, devices=["cpu"])
    else:
        dist.Backend.register_backend(BACKEND_NAME, _create_backend, extended_api=True)


_register()
# Collectives still queued at exit run to completion (and their future callbacks with them) before
# the interpreter finalizes; after that, a worker thread that needs the GIL would be stopped mid-job.
atexit.register(_C._drain_all)
