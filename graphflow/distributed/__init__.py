"""Scale-out: data-parallel runs on torch.distributed (``graphflow run --nproc N`` or
``torchrun -m graphflow run``) and partitioned graphs on DistDGL (``graphflow launch``).

* :mod:`graphflow.distributed.world`: who this process is (rank, world size, backend), the
  process group, and the few collectives a task needs (seed shards, each rank's part of every
  batch, gathered evaluation rows, averaged batch-norm statistics, replica digests).
* :mod:`graphflow.distributed.ddp`: the DDP pieces of training (the wrapped model, a link
  model's encoder and decoder through DDP, sharded node and edge epochs, sharded full-batch
  negatives).
* :mod:`graphflow.distributed.nproc`: ``--nproc N`` through torch's elastic launcher.
* :mod:`graphflow.distributed.partition`: ``graphflow partition`` (DGL's ``partition_graph``).
* :mod:`graphflow.distributed.launch`: ``graphflow launch`` (DistDGL servers and trainers per
  machine), :mod:`~graphflow.distributed.machine` (one machine's supervisor),
  :mod:`~graphflow.distributed.procs` (stopping process trees),
  :mod:`~graphflow.distributed.distdgl` (the server entry point and the trainers' client),
  :mod:`~graphflow.distributed.dist_train` (sampled training on a ``DistGraph``).
"""
