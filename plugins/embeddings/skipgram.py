"""The ``skipgram`` task: node embeddings from the walks of a ``node2vec`` / ``deepwalk`` sampler."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Literal

import torch

from graphflow.runtime import cores
from graphflow.components import Task
from graphflow.context import RunContext
from graphflow.errors import ConfigError
from graphflow.options import option
from graphflow.sampling.sampler import intra_op_threads
from graphflow.embeddings.evaluation import EvalOptions, evaluate_embeddings
from graphflow.embeddings.skipgram import (DEFAULT_LR, INIT_HOPS, Readout, SkipGram,
                                      SkipGramSettings, hogwild_workers, linear_lr)
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
    lr: float = option(DEFAULT_LR, "Initial SGD learning rate, decayed linearly to lr * 1e-4. "
                       "0.03, a little above word2vec's 0.025: a row seen more than 4 times in "
                       "a batch steps along only 4x its mean gradient (docs/node2vec.md).")
    batch_size: int | None = option(None, "Walks per update. Default: 64 on the CPU (blocks "
                                    "stay in cache), 2048 on a GPU (fewer, larger kernels).")
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
    """

    name = "skipgram"
    summary = "Skip-gram (word2vec SGNS) node embeddings from node2vec/deepwalk walks"
    Options = SkipGramOptions
    requires_sampler = True
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
        threads = plan.worker_threads
        step_walks = o.batch_size or (2048 if device.type == "cuda" else 64)
        workers = hogwild_workers(plan.workers if device.type == "cpu" else 1, n,
                                  step_walks * (walk_opts.walk_length + 1),
                                  forced="workers" in plan.overridden)
        if ctx.cores is not None and ctx.cores.workers != workers:
            ctx.cores = dataclasses.replace(ctx.cores, workers=workers)  # recorded as run
        with intra_op_threads(threads):
            model = SkipGram(n, settings, walks_data.graph.in_strength(), device, gen,
                             graph=walks_data.graph)
        total = o.epochs * n * walk_opts.walks_per_node  # walks in the whole run
        done = 0
        walk_seconds = train_seconds = 0.0
        loss = float("nan")
        for epoch in range(1, o.epochs + 1):
            starts = torch.arange(n, device=device).repeat(walk_opts.walks_per_node)
            starts = starts[torch.randperm(starts.numel(), generator=gen, device=device)]
            loss_sum = torch.zeros((), dtype=torch.float64, device=device)
            pairs = torch.zeros((), dtype=torch.float64, device=device)
            batches = starts.split(walk_opts.batch_size)
            for batch in ctx.progress(batches, desc=f"skipgram epoch {epoch}", unit="batch"):
                t0 = time.perf_counter()
                walks = sampler.sample(walks_data, batch, generator=gen)  # (B, L+1)
                _sync(device)
                t1 = time.perf_counter()
                walk_seconds += t1 - t0
                with intra_op_threads(threads):
                    step_loss, step_pairs, done = model.fit(walks, lr0, done, total, step_walks,
                                                            workers=workers,
                                                            worker_threads=threads)
                loss_sum += step_loss
                pairs += step_pairs
                _sync(device)
                train_seconds += time.perf_counter() - t1
            loss = float(loss_sum / pairs.clamp(min=1))
            ctx.log_epoch(epoch, loss=loss, lr=linear_lr(lr0, done, total))
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


def _sync(device: torch.device) -> None:
    """Wait for queued GPU work, so that the walk / training timings are honest."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
