"""Process plumbing a run needs, apart from the plugin API: cores, memory, devices, signals.

* :mod:`~graphflow.runtime.cores`: the core policy (threads and Hogwild workers per stage).
* :mod:`~graphflow.runtime.allocator`: glibc malloc settings that keep freed memory.
* :mod:`~graphflow.runtime.memory`: per-stage peak resident and CUDA memory for ``run.json``.
* :mod:`~graphflow.runtime.device`: the run's device from ``[pipeline] device``.
* :mod:`~graphflow.runtime.seed`: one seed from the config makes a CPU run repeatable.
* :mod:`~graphflow.runtime.signals`: SIGTERM / SIGHUP / SIGINT stop a run at a safe point.
* :mod:`~graphflow.runtime.progress`: tqdm on a terminal, silent when stderr is not a TTY.
"""
