"""Scale-out: data-parallel runs on torch.distributed (``graphflow run --nproc N`` or
``torchrun -m graphflow run``) and partitioned graphs on DistDGL (``graphflow launch``).

* :mod:`graphflow.distributed.world`: who this process is (rank, world size, backend), the
  process group, and the few collectives a task needs (seed shards, gathered evaluation rows,
  replica digests).
* :mod:`graphflow.distributed.ddp`: the DDP pieces of node-level training (the wrapped model,
  seed sharding of sampled epochs).
* :mod:`graphflow.distributed.nproc`: ``--nproc N`` through torch's elastic launcher.
* :mod:`graphflow.distributed.partition`: ``graphflow partition`` (DGL's ``partition_graph``).
* :mod:`graphflow.distributed.launch`: ``graphflow launch`` (DistDGL servers and trainers per
  machine), :mod:`~graphflow.distributed.machine` (one machine's supervisor),
  :mod:`~graphflow.distributed.procs` (stopping process trees),
  :mod:`~graphflow.distributed.distdgl` (the server entry point and the trainers' client),
  :mod:`~graphflow.distributed.dist_train` (sampled training on a ``DistGraph``).
"""
