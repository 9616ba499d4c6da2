"""One policy for CPU cores: how a training stage splits the machine between parallel workers
and torch's intra-op threads, so that the two never oversubscribe it.

A stage's work is one of three workloads (:data:`Workload`):

``full``
    Full-batch message passing (``node_classification`` without ``[sample]``; any task
    without a sampler). One big SpMM / GEMM per layer: every core goes to torch's intra-op
    threads, no workers.
``sampled``
    Minibatch training on sampled blocks (and on batches of whole graphs, which the graph
    tasks' workers cut the same way). Two kinds of work compete: sampling (small,
    memory-bound, one core per batch) and the model's kernels (GEMMs and SpMMs that use
    every intra-op thread). On this project's 2-core machine the model's kernels took
    ~40 ms per batch with two threads and ~70 ms with one; a batch's sampling ~10 ms on one
    core. A background worker beside two training threads makes three busy threads on two
    cores: OpenMP's barriers then wait for a descheduled thread and training slowed to
    60-80 ms per batch. Sampling inline in the training thread, then training with both
    cores, measured fastest (51-55 ms). So below :data:`MIN_CORES_FOR_WORKERS` cores the
    policy samples inline (``workers = 0``) and gives every core to training; with more
    cores it reserves one sampling worker per :data:`CORES_PER_WORKER` cores (sampling is
    ~1/5 of a batch's work) and the rest are training threads.
``walks``
    Skip-gram over random walks: many tiny products per step, where an intra-op team costs
    more than it gives (one thread was 4-8x faster than two on this machine). Every core
    runs its own Hogwild trainer on its own walk chunks (``workers = cores``), one
    intra-op thread each.

A task names its workload with the class attribute ``workload`` (``None``: ``sampled`` when
its stage has a sampler, else ``full``), and reads the decision as ``ctx.cores``
(:class:`CorePlan`). The runner applies it around the stage (:func:`applied`): torch's
intra-op threads are set to ``plan.threads`` for the stage and the caller's setting is put
back afterwards, even when the stage fails. ``run.json`` records each stage's plan.

**Overrides.** The budget is ``[pipeline] cores`` (default 0: torch's intra-op thread count
when the run starts, i.e. the machine's cores unless the user or ``OMP_NUM_THREADS`` chose
fewer). Each training stage may override the policy with a ``[train.cores]`` table
(:class:`CoreOptions`)::

    [train.cores]
    threads = 2   # torch intra-op threads of the training thread
    workers = 1   # sampling workers (sampled) or Hogwild trainers (walks); 0 = none

A component's own setting (``[sample] workers``, ``skipgram`` ``workers``) counts as an
override too, below ``[train.cores]``. See docs/cores.md for the figures.

**Measured, not assumed.** The constants above are the fixed policy, tuned on one machine.
Where the runner (or a benchmark) passes ``measured`` splits from
:func:`graphflow.runtime.calibrate.core_choices` (each candidate split timed on this machine, cached
per CPU signature and core budget), :func:`plan` starts from those instead, and the plan's
``source`` says which (``"measured"`` or ``"policy"``); overrides still win field by field.
Sampling inline or in workers yields the same batches, so a split changes speed only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import torch

from graphflow.options import option

Workload = Literal["full", "sampled", "walks"]
WORKLOADS: tuple[str, ...] = ("full", "sampled", "walks")

MIN_CORES_FOR_WORKERS = 4
"""Below this many cores, sampled training samples inline (no background worker)."""

CORES_PER_WORKER = 5
"""With enough cores, one background sampling worker per this many cores (at least one)."""


@dataclass
class CoreOptions:
    """``[train.cores]``: this stage's overrides of the core policy (None: the policy's)."""

    threads: int | None = option(
        None, "torch intra-op threads of the stage's training thread; default: the policy "
              "(every core not given to workers).")
    workers: int | None = option(
        None, "Parallel workers: background sampling threads for sampled training, Hogwild "
              "trainer threads for skipgram; 0 = none. Default: the policy.")

    def __post_init__(self) -> None:
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"cores.threads = {self.threads}: must be >= 1")
        if self.workers is not None and self.workers < 0:
            raise ValueError(f"cores.workers = {self.workers}: must be >= 0 (0 = none)")

    def is_default(self) -> bool:
        return self.threads is None and self.workers is None


@dataclass(frozen=True)
class CorePlan:
    """What one stage runs with.

    :ivar workload: ``full``, ``sampled`` or ``walks``.
    :ivar cores: the budget the plan splits.
    :ivar threads: torch intra-op threads of the training thread.
    :ivar workers: parallel workers (sampling threads, or Hogwild trainers); 0 = none.
    :ivar worker_threads: intra-op threads inside each worker.
    :ivar overridden: the fields set by an override rather than the policy.
    :ivar source: ``"measured"`` (the split timed on this machine, graphflow.runtime.calibrate) or
        ``"policy"`` (the fixed rule of :func:`policy`).

    ``threads`` is the whole stage's budget for a workload without a training thread of its
    own (``walks``: ``workers`` trainers of ``worker_threads`` each).
    """

    workload: str
    cores: int
    threads: int
    workers: int
    worker_threads: int = 1
    overridden: tuple[str, ...] = ()
    source: str = "policy"

    def as_record(self) -> dict[str, Any]:
        """The plan as ``run.json`` records it (per stage, key ``cores``)."""
        return {"workload": self.workload, "cores": self.cores, "threads": self.threads,
                "workers": self.workers, "worker_threads": self.worker_threads,
                "overridden": list(self.overridden), "source": self.source}


def default_cores() -> int:
    """The core budget when none is given: torch's intra-op thread count right now."""
    return max(1, torch.get_num_threads())


def policy(workload: str, cores: int) -> CorePlan:
    """The policy's split of ``cores`` for ``workload`` (see the module docstring)."""
    if workload not in WORKLOADS:
        raise ValueError(f"unknown workload {workload!r}; workloads: {', '.join(WORKLOADS)}")
    if cores < 1:
        raise ValueError(f"cores = {cores}: must be >= 1")
    if workload == "full":
        return CorePlan(workload, cores, threads=cores, workers=0)
    if workload == "walks":
        return CorePlan(workload, cores, threads=1, workers=cores)
    if cores < MIN_CORES_FOR_WORKERS:
        return CorePlan(workload, cores, threads=cores, workers=0)
    workers = max(1, round(cores / CORES_PER_WORKER))
    return CorePlan(workload, cores, threads=cores - workers, workers=workers)


def measured_split(workload: str, cores: int,
                   measured: Mapping[str, Mapping[str, int]] | None) -> CorePlan | None:
    """The split measured for ``workload`` (``measured``: :func:`graphflow.runtime.calibrate.core_choices`'s
    ``plans``), or None when there is none or it does not fit ``cores``."""
    found = (measured or {}).get(workload)
    if not found:
        return None
    threads, workers = int(found["threads"]), int(found["workers"])
    worker_threads = int(found.get("worker_threads", 1))
    if threads < 1 or workers < 0 or worker_threads < 1 or max(threads, workers) > cores:
        return None
    return CorePlan(workload, cores, threads=threads, workers=workers,
                    worker_threads=worker_threads, source="measured")


def plan(workload: str, cores: int | None = None,
         *overrides: CoreOptions | Mapping[str, int | None] | None,
         measured: Mapping[str, Mapping[str, int]] | None = None) -> CorePlan:
    """The plan for ``workload`` on ``cores`` (default :func:`default_cores`): the
    ``measured`` split when there is one for the workload, else the policy's, with
    ``overrides`` applied field by field, the first one that sets a field winning.

    Setting ``workers`` alone keeps the total: the training threads become what is left
    (at least one). Setting ``threads`` alone keeps the policy's workers.
    """
    budget = cores if cores else default_cores()
    base = measured_split(workload, budget, measured) or policy(workload, budget)
    chosen: dict[str, int] = {}
    for override in overrides:
        if override is None:
            continue
        values = dataclasses.asdict(override) if isinstance(override, CoreOptions) \
            else dict(override)
        for key in ("threads", "workers", "worker_threads"):
            if values.get(key) is not None and key not in chosen:
                chosen[key] = int(values[key])
    workers = chosen.get("workers", base.workers)
    if "threads" in chosen:
        threads = chosen["threads"]
    elif "workers" in chosen and workload == "sampled":
        threads = max(1, budget - workers)
    else:
        threads = base.threads
    return CorePlan(workload, budget, threads=threads, workers=workers,
                    worker_threads=chosen.get("worker_threads", base.worker_threads),
                    overridden=tuple(k for k in ("threads", "workers", "worker_threads")
                                     if k in chosen), source=base.source)


def component_settings(task: Any, sampler: Any, workload: str) -> list[dict[str, int | None]]:
    """The core settings a stage's components were given, as overrides (task first).

    ``workers`` of the task's options (``skipgram``) or, for sampled training, of the
    sampler's (``[sample] workers``); ``threads`` of a ``walks`` task is its trainers'
    intra-op threads (``worker_threads``). Unset (None) options leave the policy's value.
    """
    task_options = getattr(task, "options", None)
    found: list[dict[str, int | None]] = [{"workers": getattr(task_options, "workers", None)}]
    if workload == "walks":
        found.append({"worker_threads": getattr(task_options, "threads", None)})
    if workload == "sampled" and sampler is not None:
        found.append({"workers": getattr(getattr(sampler, "options", None), "workers", None)})
    return found


def task_workload(task: Any, has_sampler: bool) -> str:
    """A task's workload: its ``workload`` attribute, else ``sampled`` / ``full``."""
    declared = getattr(task, "workload", None)
    if declared is not None:
        return declared
    return "sampled" if has_sampler else "full"


@contextmanager
def applied(plan_: CorePlan) -> Iterator[CorePlan]:
    """Run the block with ``plan_.threads`` torch intra-op threads, then restore the caller's.

    ``torch.set_num_threads`` is per OS thread (OpenMP's setting), so this affects the
    calling thread only; workers set their own (``plan_.worker_threads``).
    """
    before = torch.get_num_threads()
    torch.set_num_threads(plan_.threads)
    try:
        yield plan_
    finally:
        torch.set_num_threads(before)
