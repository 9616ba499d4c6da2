"""Scale-out: data-parallel runs on torch.distributed (``graphflow run --nproc N`` or
``torchrun -m graphflow run``).

* :mod:`graphflow.distributed.world`: who this process is (rank, world size, backend), the
  process group, and the few collectives a task needs (seed shards, gathered evaluation rows,
  replica digests).
* :mod:`graphflow.distributed.ddp`: the DDP pieces of node-level training (the wrapped model,
  seed sharding of sampled epochs).
* :mod:`graphflow.distributed.nproc`: ``--nproc N`` through torch's elastic launcher.
"""
