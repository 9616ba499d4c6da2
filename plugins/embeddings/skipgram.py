"""The ``skipgram`` task: node embeddings from the walks of a ``node2vec`` / ``deepwalk`` sampler."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from graphflow.runtime import cores, signals
from graphflow.capabilities import refuses
from graphflow.components import Task
from graphflow.context import RunContext
from graphflow.errors import ConfigError
from graphflow.options import option
from graphflow.sampling import native
from graphflow.sampling.sampler import intra_op_threads
from graphflow.embeddings.evaluation import EvalOptions, evaluate_embeddings
from graphflow.train import checkpoint as ckpt
from graphflow.train import finite
from graphflow.train.loop import stage_files
from graphflow.embeddings.skipgram import (DEFAULT_LR, INIT_HOPS, Readout, SkipGram,
                                           SkipGramSettings, default_step_walks,
                                           hogwild_split, linear_lr)
from graphflow_plugins.embeddings.samplers import WalkData, WalkSampler


@dataclass
class SkipGramOptions:
    dim: int = option(128, "Embedding width.")
    window: int = option(10, "Context window: nodes up to this many steps apart in a walk "
                         "form positive pairs.")
    dynamic_window: bool = option(True, "Draw each center's window from 1..window (word2vec), "
                                  "weighting near nodes more.")
    negatives: int = option(5, "Noise samples per positive pair, from the in-degree^0.75 "
                            "distribution.")
    epochs: int = option(1, "Passes; every epoch walks walks_per_node fresh walks per node.")
    lr: float = option(DEFAULT_LR, "Initial SGD learning rate, decayed linearly to lr * 1e-4 "
                       "(word2vec's 0.025; checked on other graphs, 1-4 workers, in "
                       "docs/node2vec.md). Small graphs need more epochs or a larger lr.")
    batch_size: int | None = option(None, "Walks per update. Default: 64 on the CPU (blocks "
                                    "stay in cache), 512 on a GPU (fewer kernels; larger "
                                    "steps lose quality under the row cap).")
    subsample: float = option(0.0, "Frequent-node subsampling threshold t (word2vec's sample, "
                              "e.g. 1e-3); 0 = off.")
    precision: Literal["auto", "float32", "bfloat16"] = option(
        "auto", "Dtype of the batched score and gradient products (tables and updates stay "
        "float32): auto = bfloat16 where the device multiplies it natively (CPUs with "
        "AVX512-BF16/AMX, recent GPUs), else float32.")
    readout: Readout = option(
        "input", 'The exported node vectors: "input" (word2vec\'s and gensim\'s wv) or "sum", '
        "the input plus the output (context) vectors (w + c, Levy et al. 2015; GloVe's).")
    init_hops: int = option(
        INIT_HOPS, "Start the input vectors as word2vec's random ones averaged over this many "
        "steps of the walk graph's transition matrix (FastRP's projection; a warm start as "
        "in HARP), so one epoch begins from the graph's coarse structure; 0 = word2vec's "
        "random start (docs/node2vec.md).")
    eval: bool = option(False, "After training, run embedding_eval's node classification "
                        "(and link prediction when the sampler held out edges).")
    eval_train_fraction: float = option(0.5, "eval: training share of the labelled nodes when "
                                        "the graph has no train/test masks.")
    workers: int | None = option(
        None, "Hogwild trainer threads on the CPU, each on its own share of the walks, "
              "updating the shared tables without locks (as word2vec/gensim). Default: the "
              "core policy (every core, docs/cores.md); [train.cores] workers overrides. "
              "1 = one trainer, reproducible from the seed; more are not bit-for-bit.")
    threads: int | None = option(
        None, "CPU intra-op threads of each trainer (default: the core policy, 1). The "
              "blocks are small matrix products: one thread per trainer was 4-8x faster "
              "than two on a 2-core machine shared with other work.")
    seed: int | None = option(None, "Seed of walks, noise and initialisation; default: the "
                              "pipeline seed.")
    checkpoint: bool = option(
        True, "Save the training state (both tables, the position in the learning-rate "
              "schedule, the generator, the walk batch and step) to OUT_DIR/train_state.pt, "
              "so that graphflow run --resume continues after a crash.")
    checkpoint_seconds: float = option(
        30.0, "checkpoint: save at the first safe point at least this many seconds after the "
              "last save (a step boundary with one trainer, a walk-batch boundary with Hogwild "
              "workers); 0 = at every one.")

    def __post_init__(self) -> None:
        if self.init_hops < 0:
            raise ValueError(f"init_hops = {self.init_hops}: must be >= 0 (0 = random start)")
        for name in ("dim", "window", "negatives", "epochs", "batch_size"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} = {getattr(self, name)}: must be >= 1")
        if not self.lr > 0:
            raise ValueError(f"lr = {self.lr}: must be > 0")
        if self.subsample < 0:
            raise ValueError(f"subsample = {self.subsample}: must be >= 0 (0 = off)")
        if not 0.0 < self.eval_train_fraction < 1.0:
            raise ValueError(f"eval_train_fraction = {self.eval_train_fraction}: must lie in "
                             f"(0, 1)")
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads = {self.threads}: must be >= 1")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers = {self.workers}: must be >= 1")
        if self.checkpoint_seconds < 0:
            raise ValueError(f"checkpoint_seconds = {self.checkpoint_seconds}: must be >= 0 "
                             f"(0 = after every walk batch)")


class SkipGramTask(Task):
    """Skip-gram with negative sampling over random walks: DeepWalk / Node2Vec embeddings.

    Needs a ``node2vec`` or ``deepwalk`` ``[sample]``. Every epoch starts ``walks_per_node``
    walks from every node (in a seeded random order) and walks them in batches of the sampler's
    ``batch_size`` on the run's device. Each walk batch is then trained on in chunks of this
    task's ``batch_size`` walks, one SGD update per chunk, the learning rate decayed linearly
    chunk by chunk: context pairs, word2vec's dynamic window, optional frequent-node
    subsampling and in-degree^0.75 noise nodes are all made on the device from the walk
    tensor, scored as batched matrix products, and applied as sparse SGD row updates (a row
    seen many times in a chunk steps along a multiple of its mean gradient). Padding after a
    dead end never forms a pair. The walks, their order and the noise all come from one
    generator seeded by ``seed``. The input vectors start as word2vec's random ones averaged
    over ``init_hops`` steps of the walk graph's transition matrix (0: word2vec's random start;
    see :mod:`graphflow.embeddings.smoothed_start`). On the CPU each walk batch is trained by ``workers``
    Hogwild threads (the core policy: one per core), each on its own share; with one worker a
    seed reproduces the embeddings exactly, with several the update interleaving varies. A
    graph with fewer nodes than one step's walk tokens (``batch_size * (walk_length + 1)``)
    trains on one worker unless ``workers`` is set: there every row is in every step.

    Sets ``ctx.artifacts.embeddings`` (float32 (N, dim), CPU) for exporters and for later
    stages (e.g. ``node_classification`` with ``features = "embeddings"``). Logs the loss per
    epoch and ``skipgram_loss``, ``walk_seconds``, ``train_seconds``; with ``eval = true`` also
    ``embedding_eval``'s metrics.

    Checkpoints (``checkpoint``): at the first safe point ``checkpoint_seconds`` after the
    last save, the state that training continues from (both tables, the walks trained so
    far, which fix the learning rate of the linear schedule, the generator, the epoch's start
    nodes, the walk batch and, with one trainer, the steps of it trained) is written
    atomically to ``OUT_DIR/train_state.pt``; a signal (SIGTERM, Ctrl-C) also saves it. Safe
    points are step boundaries with one trainer (the walk batch is walked again from its
    saved generator state on resume, then trained on from the saved step) and walk-batch
    boundaries with Hogwild workers (a walk batch is the sampler's ``batch_size`` start
    nodes). ``graphflow run --resume`` continues from there: with one worker a resumed run
    ends with exactly the embeddings of an uninterrupted one; with several Hogwild workers
    the row updates interleave differently on every run, resumed or not, so the tables are
    as close as two uninterrupted runs are, not identical. The file is removed when training
    ends.

    It does not run on the shared epoch loop of supervised tasks
    (:mod:`graphflow.train.task`), on purpose: there is no validation split to monitor, so
    ``patience``, ``restore_best`` and a best-model checkpoint have nothing to decide on, and
    the learning rate decays linearly over the whole run's walks (word2vec's schedule), so an
    "epoch" is a slice of one schedule rather than a repeatable unit (the default is one
    epoch): the unit of a checkpoint is the walk batch.
    """

    name = "skipgram"
    summary = "Skip-gram (word2vec SGNS) node embeddings from node2vec/deepwalk walks"
    Options = SkipGramOptions
    requires_sampler = True
    refusals = (
        *refuses("onnx", "torchscript", reason="skip-gram has no model to export, only its "
                 "embedding table", alternative='export what = "embeddings" (parquet, npy)'),
        *refuses("predictions", reason="skip-gram makes node embeddings, not predictions",
                 alternative='export what = "embeddings", or add a node_classification stage '
                 'with features = "embeddings"'),
    )
    workload = "walks"  # graphflow.runtime.cores: one Hogwild trainer per core

    def run(self, ctx: RunContext) -> None:
        o = self.options
        sampler, walks_data = ctx.sampler, ctx.sampler_graph
        if not isinstance(sampler, WalkSampler) or not isinstance(walks_data, WalkData):
            got = getattr(sampler, "name", type(sampler).__name__)
            raise ConfigError(f'skipgram needs a random-walk sampler ([sample] type = '
                              f'"node2vec" or "deepwalk"), got "{got}"')
        walk_opts = sampler.options
        device = walks_data.device
        n = walks_data.num_nodes
        seed = ctx.seed if o.seed is None else o.seed
        gen = torch.Generator(device=device).manual_seed(seed)
        settings = SkipGramSettings(dim=o.dim, window=o.window, negatives=o.negatives,
                                    dynamic_window=o.dynamic_window, subsample=o.subsample,
                                    precision=o.precision, init_hops=o.init_hops)
        lr0 = o.lr
        plan = ctx.cores or cores.plan("walks", None, {"workers": o.workers},
                                       {"worker_threads": o.threads})
        step_walks = o.batch_size or default_step_walks(device)
        workers, threads = hogwild_split(
            plan.workers, plan.worker_threads, device, n,
            step_walks * (walk_opts.walk_length + 1), forced_workers="workers" in plan.overridden,
            forced_threads="worker_threads" in plan.overridden)
        if ctx.cores is not None and (ctx.cores.workers, ctx.cores.worker_threads) != \
                (workers, threads):  # recorded as run
            ctx.cores = dataclasses.replace(ctx.cores, workers=workers, worker_threads=threads)
        with intra_op_threads(threads):
            model = SkipGram(n, settings, walks_data.graph.in_strength(), device, gen,
                             graph=walks_data.graph)
        total = o.epochs * n * walk_opts.walks_per_node  # walks in the whole run
        state_path = stage_files(ctx)[1]
        kept = {k: v for k, v in _jsonable(o).items() if k not in RESUME_MAY_CHANGE}
        meta = {"task": self.name, "nodes": n, "options": kept,
                "sampler": getattr(sampler, "name", None), "walks": _jsonable(walk_opts)}
        run = _Progress()
        if ctx.resume:
            run = self._resume(ctx, state_path, meta, model, gen, run)
        fix = f"lower lr (now {lr0:g}){', or set workers = 1' if workers > 1 else ''}"
        loss = float("nan")
        clock = {"saved": time.monotonic()}
        # one trainer: where the walk batch stands after its last step (steps, done, loss and
        # pairs of this batch so far, generator): what a save at that point holds
        last: dict[str, tuple[int, int, torch.Tensor, torch.Tensor, torch.Tensor]] = {}

        def due() -> bool:
            return o.checkpoint and time.monotonic() - clock["saved"] >= o.checkpoint_seconds

        def save(state: _Progress) -> None:
            self._save_state(ctx, state_path, meta, model, state)
            clock["saved"] = time.monotonic()

        def after_last_step() -> _Progress:
            """``run`` as of the last step (``run`` itself when the batch has none yet)."""
            if "step" not in last:
                return run
            step, done, loss_part, pairs_part, rng = last["step"]
            return dataclasses.replace(run, step=step, step_rng=rng, done=done,
                                       loss_sum=run.loss_sum + float(loss_part),
                                       pairs=run.pairs + float(pairs_part))

        def after_step(step: int, done: int, loss_part: torch.Tensor,
                       pairs_part: torch.Tensor) -> None:
            # the tables and the generator are exactly what step + 1 starts from
            last["step"] = (step, done, loss_part.clone(), pairs_part.clone(), gen.get_state())
            if due():
                save(after_last_step())

        with signals.deferred():  # a signal stops training at the next step, its state saved
            try:
                for epoch in range(run.epoch, o.epochs + 1):
                    if run.starts is None or epoch != run.epoch:  # a fresh epoch
                        starts = torch.arange(n, device=device).repeat(walk_opts.walks_per_node)
                        starts = starts[torch.randperm(starts.numel(), generator=gen,
                                                       device=device)]
                        run.epoch, run.batch, run.starts = epoch, 0, starts
                    batches = run.starts.split(walk_opts.batch_size)
                    for b in ctx.progress(range(run.batch, len(batches)),
                                          desc=f"skipgram epoch {epoch}", unit="batch",
                                          total=len(batches) - run.batch):
                        run.batch, run.rng = b, gen.get_state()  # what a resume redoes
                        t0 = time.perf_counter()
                        with native.threads(workers * threads):  # the stage's cores
                            walks = sampler.sample(walks_data, batches[b], generator=gen)
                        _sync(device)
                        t1 = time.perf_counter()
                        run.walk_seconds += t1 - t0
                        last.clear()
                        start, run.step = run.step, 0
                        if start:  # resumed part-way through this batch: the saved generator
                            gen.set_state(run.step_rng)
                            zero = torch.zeros((), dtype=torch.float64)
                            last["step"] = (start, run.done, zero, zero, run.step_rng)
                        run.step_rng = None
                        with intra_op_threads(threads):
                            step_loss, step_pairs, done = model.fit(
                                walks, lr0, run.done, total, step_walks, workers=workers,
                                worker_threads=threads, stop=signals.pending, start=start,
                                after_step=after_step)
                        _sync(device)
                        run.train_seconds += time.perf_counter() - t1
                        signals.safe_point()  # stopped inside fit: save (below) and stop
                        finite.check_loss(float(step_loss), "skip-gram loss", epoch=epoch,
                                          where=f"walk batch {b + 1} of {len(batches)}", fix=fix)
                        run.loss_sum += float(step_loss)
                        run.pairs += float(step_pairs)
                        run.done = done
                        if due():  # a boundary: the next batch starts from exactly this state
                            run.batch, run.rng = b + 1, gen.get_state()
                            save(run)
                    loss = run.loss_sum / max(run.pairs, 1.0)
                    ctx.log_epoch(epoch, loss=loss, lr=linear_lr(lr0, run.done, total))
                    run.loss_sum = run.pairs = 0.0
                    run.starts = None
            except signals.Terminated:
                # one trainer: exactly after its last step; Hogwild: the interrupted batch,
                # walked and trained again whole from the tables as they are
                self._save_state(ctx, state_path, meta, model, after_last_step(),
                                 stopped=True)
                raise
        walk_seconds, train_seconds = run.walk_seconds, run.train_seconds
        finite.check_output(model.emb[:n], "skip-gram embeddings", fix=fix)
        finite.check_output(model.out_emb[:n], "skip-gram output vectors", fix=fix)
        state_path.unlink(missing_ok=True)  # finished: nothing left to resume
        ctx.artifacts.embeddings = model.embeddings(o.readout)
        ctx.log_metrics(skipgram_loss=loss, walk_seconds=walk_seconds,
                        train_seconds=train_seconds)
        ctx.info(f"skipgram: {n} nodes x {o.dim} dims, loss {loss:.4f} "
                 f"(walks {walk_seconds:.1f}s, training {train_seconds:.1f}s)")
        if o.eval:
            options = EvalOptions(classification="label" in ctx.graph().graph.ndata,
                                  train_fraction=o.eval_train_fraction,
                                  link_prediction=ctx.graph().links is not None)
            if options.classification or options.link_prediction:
                evaluate_embeddings(ctx, ctx.artifacts.embeddings, options)
            else:
                ctx.info("skipgram eval: the graph has no labels and no edges were held out; "
                         "nothing to evaluate")

    def _save_state(self, ctx: RunContext, path: Path, meta: dict[str, Any], model: SkipGram,
                    run: _Progress, *, stopped: bool = False) -> None:
        """Write what ``--resume`` continues from (atomically): the tables as they are, and
        where ``run`` stands: the walk batch ``run.batch`` (walked from the generator state
        ``run.rng``) and, part-way through it, the steps trained and the generator state
        after them (one trainer: an exact resume); Hogwild workers stopped by a signal: the
        interrupted batch, walked and trained again whole on resume. ``stopped``: say so."""
        if run.starts is None or run.rng is None:  # before the first batch: nothing to keep
            return
        ckpt.save(path, {"meta": meta, "emb": model.emb, "out_emb": model.out_emb,
                         **dataclasses.asdict(run)})
        if stopped:
            section = ctx.stage.section if ctx.stage else "train"
            name = signals.signal_name(signals.pending() or 0)
            ctx.info(f"[{section}] {name}: skip-gram stopped in epoch {run.epoch}, walk batch "
                     f"{run.batch + 1}" + (f", step {run.step}" if run.step else "")
                     + f"; graphflow run --resume continues from {path}")

    def _resume(self, ctx: RunContext, path: Path, meta: dict[str, Any], model: SkipGram,
                gen: torch.Generator, run: _Progress) -> _Progress:
        section = ctx.stage.section if ctx.stage else "train"
        if not path.exists():
            ctx.info(f"[{section}] no {path.name} in {ctx.out_dir}: training skip-gram from "
                     f"the start")
            return run
        state = ckpt.load(path)
        if state.get("meta") != meta:
            saved = state.get("meta") or {}
            changed = sorted(k for k in set(saved) | set(meta) if saved.get(k) != meta.get(k))
            raise ConfigError(f"[{section}] cannot resume from {path}: the pipeline changed "
                              f"({', '.join(changed) or 'not a skip-gram state'}); run without "
                              f"--resume, or restore the settings")
        model.emb.copy_(state["emb"].to(model.emb.device))
        model.out_emb.copy_(state["out_emb"].to(model.out_emb.device))
        fields = {f.name for f in dataclasses.fields(_Progress)}
        run = _Progress(**{k: v for k, v in state.items() if k in fields})
        run.starts = run.starts.to(model.device)
        gen.set_state(run.rng)
        ctx.info(f"[{section}] resuming skip-gram in epoch {run.epoch} at walk batch "
                 f"{run.batch + 1}" + (f", after step {run.step}" if run.step else ""))
        return run


RESUME_MAY_CHANGE = ("epochs", "eval", "eval_train_fraction", "workers", "threads",
                     "checkpoint", "checkpoint_seconds")
"""Options a ``--resume`` may change (they shape neither the tables nor the walks)."""


@dataclass
class _Progress:
    """Where a skip-gram run stands (saved at walk-batch boundaries and on a signal,
    restored by ``--resume``).

    :ivar batch: the walk batch to train next (after a signal: the interrupted one, walked
        and trained again whole). :ivar rng: the generator's state before that batch's walks.
    :ivar starts: the epoch's start nodes in their shuffled order. :ivar done: walks trained
        so far (the position in the learning-rate schedule). :ivar step: one trainer, saved
        part-way through the batch: its steps trained already (a resume walks the batch again
        from ``rng``, then trains on from step ``step`` with the generator state
        ``step_rng``).
    """

    epoch: int = 1
    batch: int = 0
    done: int = 0
    rng: torch.Tensor | None = None
    starts: torch.Tensor | None = None
    step: int = 0
    step_rng: torch.Tensor | None = None
    loss_sum: float = 0.0
    pairs: float = 0.0
    walk_seconds: float = 0.0
    train_seconds: float = 0.0


def _jsonable(options: Any) -> dict[str, Any]:
    """Options as plain data, compared on ``--resume``."""
    values = dataclasses.asdict(options) if dataclasses.is_dataclass(options) else {}
    return {k: v if isinstance(v, (int, float, str, bool, type(None))) else str(v)
            for k, v in values.items()}


def _sync(device: torch.device) -> None:
    """Wait for queued GPU work, so that the walk / training timings are honest."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
