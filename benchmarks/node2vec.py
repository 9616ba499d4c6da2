"""Node2Vec speed and quality: graphflow's walks vs DGL's, graphflow's skip-gram vs gensim's.

Everything runs in one process, peers side by side on the same data.

(a) **Walks.** An R-MAT graph (``graphflow.io.synthetic.rmat``: power-law degrees, hubs, duplicate
    edges), made undirected: 1M nodes and 10M directed edges (``--quick``: 100k / 1M). The same
    start nodes (``--walk-seeds`` random nodes with edges) walk 80 steps with p = 0.25, q = 4,
    ``--walk-reps`` times a side (default 5), the side that goes first alternating,
    through graphflow's ``random_walks`` (on the CPU its compiled walks, on the core budget's
    threads as the ``node2vec`` sampler runs them; their one-off compilation warmed up first,
    not counted) and DGL's ``dgl.sampling.node2vec_random_walk`` (C++, OpenMP on the same
    threads). Figure: walk steps per second (taken steps, padding excluded), medians;
    ``walk_ratio`` = graphflow / DGL, with its range over the repetitions' pairs
    (``--record`` also writes these to ``benchmarks/results/node2vec_walks/``). The uniform path (p = q = 1) against ``dgl.sampling.random_walk`` is
    reported too, and graphflow's one-off preparation (the CSR; the edge hash set too off the
    CPU) separately.

(b) **End to end**, two graphs:

    * ``sbm``: a labelled SBM (``graphflow.io.synthetic.sbm``; 20k nodes, 10 classes, mean degree
      10 with half the edges across classes; ``--quick``: 2k nodes), one label per node;
    * ``dense``: a multi-label graph of overlapping communities
      (``graphflow.io.synthetic.overlapping_communities``, 15% of edges inside a community;
      10k nodes, mean degree ~68, 36 labels,
      ~1.4 labels per node, popularity-skewed like BlogCatalog; ``--quick``: 2k nodes).

    10 walks of 80 steps per node (p = 0.25, q = 4), window 10, 128 dimensions, 5 negatives,
    one epoch, no subsampling. Three pipelines, each on its own walks:

    * **graphflow**: ``random_walks`` (on the core budget's threads, as the ``node2vec``
      sampler in the ``skipgram`` task) + its blocked skip-gram on the core policy's Hogwild
      workers (``graphflow.runtime.cores``: one per core);
    * **DGL + gensim**: ``dgl.sampling.node2vec_random_walk`` + ``Word2Vec(sg=1, negative=5,
      workers=cores, min_count=1, sample=0)``;
    * **PecanPy + gensim**: ``pecanpy.PreComp(p, q, workers=cores)`` (numba, every core;
      its one-off JIT compilation is warmed up on a tiny graph first and not counted) + the
      same ``Word2Vec``.

    Turning walks into gensim's token lists is not counted for DGL (PecanPy returns them).
    ``ratio`` = the faster peer's time / graphflow's. Quality, node2vec paper protocol: half
    the labelled nodes train a one-vs-rest logistic regression (``graphflow.embeddings.evaluation.
    classify``, penalty by 5-fold cross-validation on the training half), the other half is
    predicted (top-k for multi-label, k = the node's number of labels); accuracy, micro- and
    macro-F1 on the same split for every peer.

    **Training seeds.** One training run is not enough to rank the peers: a training seed
    alone moves macro-F1 by about 1.5 points on the SBM and 3 on the dense graph. Each peer
    therefore trains ``--train-seeds R`` times (default 3, ``--quick`` 2) on its SAME walks,
    with training seeds ``seed, seed + 1, ...`` (graphflow's SkipGram generator, gensim's
    ``seed``), each evaluated on the same split. Reported per peer: the mean and standard
    deviation of accuracy, micro- and macro-F1 over the R trainings, and the R macro-F1s;
    "macro-F1 at least the peer's" is judged on the means. End to end = one walk generation
    + the MEAN training time, so speed and quality stand on the same footing. The walks are
    generated once per peer (graphflow, DGL, PecanPy, in that order); the trainings run in
    rounds, the peers' order alternating from round to round (``benchmarks/records.py``:
    graphflow, DGL + gensim, PecanPy + gensim, then reversed), each timed whole, from its
    model's construction to its ``(N, D)`` embeddings.

(c) **Social**: a dense multi-label graph with power-law degrees and the statistics of a
    social network (BlogCatalog's: 10,312 nodes, 333,983 undirected edges, 39 overlapping
    labels, ~1.4 per node; ``social_communities``, a share ``SOCIAL_WITHIN`` of the edges
    inside a community, degrees up to a few thousand; ``--quick``: 2k nodes). graphflow
    (walks + skip-gram at the task's defaults) against PecanPy walks + gensim ``Word2Vec``, the
    same settings as (b), each side end to end on its own walks and training seed
    ``seed + r`` for ``r < --social-seeds`` (default 3), with 1 and 2 workers each
    (``--social-workers``; graphflow's Hogwild workers of one thread, PecanPy's and gensim's
    workers), the side that goes first alternating from seed to seed. Reported: medians over
    the seeds of macro-F1 (same protocol and split as (b)) and of the end-to-end time.

    python benchmarks/node2vec.py [--quick] [--device cpu|cuda] [--threads N]
        [--cases sbm,dense,social] [--allocator retain|system] [--train-seeds R]
        [--social-workers 1,2] [--social-seeds 3] [--record]

``--allocator`` sets ``malloc`` for the whole process, so every peer runs under the same
setting: ``retain`` (default, what ``graphflow run`` sets, see ``graphflow.runtime.allocator``) or
``system`` (glibc as it is).

``--threads`` sets torch's and DGL's CPU threads (default: torch's) and so the core budget:
gensim and PecanPy get as many workers, graphflow the Hogwild trainers its core split for
this budget gives (``graphflow.runtime.cores``, measured on this machine by ``graphflow.runtime.calibrate``,
as ``graphflow run`` applies it; ``--train-workers`` overrides). DGL's graphs have their
formats built before any timer. The output starts with the machine (``benchmarks/machine.py``),
recorded under ``"machine"`` in the JSON line. The last output line is one JSON object with the figures:
``<case>_<peer>_{acc,micro_f1,macro_f1}`` are the means over the training seeds,
``..._std`` their standard deviations, ``..._runs`` the single values; ``<case>_<peer>_train_s``
is the mean training time (``..._train_s_runs`` each); ``..._l2_runs`` the L2 penalty that
cross-validation chose for each training's classifier (``graphflow.embeddings.evaluation.L2_GRID``);
``<case>_macro_f1_met`` and ``<case>_macro_f1_margin`` compare graphflow's mean with the best
peer's, and ``<case>_macro_f1_margin_se`` is the standard error of that difference (from the
trainings' spread; null with one training a peer): a margin inside about two of them is a tie
that another run may reverse.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from benchmarks import records  # noqa: E402
from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.runtime import allocator, cores  # noqa: E402
from graphflow.io.synthetic import Generated, overlapping_communities, rmat, sbm  # noqa: E402
from graphflow.sampling.sampler import intra_op_threads  # noqa: E402
from graphflow.walks.csr import from_edges  # noqa: E402
from graphflow.embeddings.evaluation import classify, random_split  # noqa: E402
from graphflow.walks.node2vec import random_walks  # noqa: E402
from graphflow.walks import native as walks_native  # noqa: E402
from graphflow.sampling import native  # noqa: E402
from graphflow.embeddings.skipgram import (  # noqa: E402
    SkipGram, SkipGramSettings, default_step_walks, hogwild_split)
from graphflow_plugins.embeddings.skipgram import SkipGramOptions  # noqa: E402

from benchmarks import machine  # noqa: E402

P, Q = 0.25, 4.0
STEPS = 80
SPLITS: dict[str, dict[str, int]] = {}  # the measured core splits (graphflow.runtime.calibrate)
WALKS_PER_NODE, WINDOW, DIM, NEGATIVES = 10, 10, 128, 5
LR = SkipGramOptions().lr  # the skipgram task's default (0.025, as gensim's)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def taken_steps(walks: torch.Tensor) -> int:
    return int((walks[:, 1:] >= 0).sum())


def bench_walks(nodes: int, edges: int, n_seeds: int, device: torch.device, seed: int,
                reps: int = 5) -> dict:
    t0 = time.perf_counter()
    g = rmat(nodes, edges // 2, seed=seed)
    src, dst = torch.cat([g.src, g.dst]), torch.cat([g.dst, g.src])
    gen_s = time.perf_counter() - t0
    with intra_op_threads(1):
        t0 = time.perf_counter()
        graph = from_edges(src, dst, nodes).to(device)
        if not walks_native.supports(graph):
            graph.with_edge_set()  # what the torch steps query
        sync(device)
        prepare_s = time.perf_counter() - t0
    dgl_graph = dgl.graph((src, dst), num_nodes=nodes)
    dgl_graph.create_formats_()  # before timing, as graphflow's CSR is prepared
    has_edges = (graph.out_degrees() > 0).nonzero().squeeze(1).cpu()
    pick = torch.randperm(has_edges.numel(), generator=torch.Generator().manual_seed(seed))
    seeds = has_edges[pick[:n_seeds]]
    out: dict[str, object] = {"walk_graph_nodes": nodes, "walk_graph_edges": int(src.numel()),
                             "walk_seeds": int(seeds.numel()), "generate_s": round(gen_s, 2),
                             "prepare_s": round(prepare_s, 2)}
    threads = torch.get_num_threads()
    for name, p, q in (("biased", P, Q), ("uniform", 1.0, 1.0)):
        steps: dict[str, list[int]] = {"graphflow": [], "dgl": []}

        def ours(rep: int, p: float = p, q: float = q, steps: dict = steps) -> None:
            with intra_op_threads(1), native.threads(threads):  # as the sampler walks
                walks = random_walks(graph, seeds.to(device), STEPS, p=p, q=q,
                                     generator=torch.Generator(device).manual_seed(seed + rep))
                sync(device)
            steps["graphflow"].append(taken_steps(walks))

        def theirs(rep: int, p: float = p, q: float = q, name: str = name,
                   steps: dict = steps) -> None:
            dgl.seed(seed + rep)
            if name == "biased":
                traces = dgl.sampling.node2vec_random_walk(dgl_graph, seeds, p, q, STEPS)
            else:
                traces, _ = dgl.sampling.random_walk(dgl_graph, seeds, length=STEPS)
            steps["dgl"].append(taken_steps(traces))

        secs = records.alternate({"graphflow": ours, "dgl": theirs}, reps)
        rates = {side: [n / t for n, t in zip(steps[side], secs[side])] for side in secs}
        # steps per second: the ratio is graphflow's rate over DGL's (both as seconds per
        # million steps, so that records.ratio_spread's slow / fast reads the right way)
        per_m = {side: [1e6 / r for r in rates[side]] for side in rates}
        ratio = records.ratio_spread(per_m["dgl"], per_m["graphflow"])
        out[f"{name}_steps_per_s"] = round(statistics.median(rates["graphflow"]))
        out[f"dgl_{name}_steps_per_s"] = round(statistics.median(rates["dgl"]))
        out[f"{name}_steps_per_s_runs"] = [round(r) for r in rates["graphflow"]]
        out[f"dgl_{name}_steps_per_s_runs"] = [round(r) for r in rates["dgl"]]
        out[f"{name}_ratio_spread"] = ratio
        out[f"{name}_ratio"] = round(ratio["median"], 2)
        print(f"(a) {name:7s} p={p} q={q}, {reps} alternating repetitions: graphflow "
              f"{out[f'{name}_steps_per_s'] / 1e6:.2f}M steps/s, DGL "
              f"{out[f'dgl_{name}_steps_per_s'] / 1e6:.3f}M steps/s (medians): "
              f"{ratio['median']:.2f}x ({ratio['min']:.2f}-{ratio['max']:.2f} over the pairs)",
              flush=True)
    out["walk_threads"] = threads
    out["walk_ratio"] = out["biased_ratio"]
    return out


def numpy_aliases_for_nptyping() -> None:
    """PecanPy imports nptyping 2.0, which reads NumPy scalar aliases removed in NumPy 2
    (``np.bool8``...); give them their NumPy 2 names so PecanPy imports (benchmark only)."""
    import numpy as np

    for old, new in (("bool8", "bool_"), ("object0", "object_"), ("int0", "intp"),
                     ("uint0", "uintp"), ("void0", "void"), ("bytes0", "bytes_"),
                     ("str0", "str_"), ("float_", "float64"), ("complex_", "complex128"),
                     ("longfloat", "longdouble"), ("singlecomplex", "csingle"),
                     ("cfloat", "cdouble"), ("longcomplex", "clongdouble"),
                     ("clongfloat", "clongdouble"), ("string_", "bytes_"),
                     ("unicode_", "str_")):
        if old not in np.__dict__:
            setattr(np, old, getattr(np, new))


def social_communities(nodes: int, labels: int, edges: int, *, within: float,
                       exponent: float = 2.2, extra_labels: float = 0.4,
                       popularity: float = 1.0, seed: int = 0) -> Generated:
    """A dense multi-label social graph with power-law degrees (BlogCatalog's statistics:
    10,312 nodes, 333,983 undirected edges, 39 overlapping labels, about 1.4 per node).

    Each node joins ``1 + Poisson(extra_labels)`` distinct labels picked with probability
    ``(rank + 1) ** -popularity`` (a few common labels, many rare ones) and gets a Chung-Lu
    weight ``theta ~ Pareto`` of tail ``exponent`` (capped at ``sqrt(2 edges)``). An edge
    draws one end by ``theta``; with probability ``within`` the other end by ``theta`` among
    the members of one of the first end's labels (a random membership of it), else among all
    nodes. Candidates are drawn in rounds, self-loops and repeats dropped, until exactly
    ``edges`` distinct undirected edges are kept (the first drawn). Vectorised; the rounds
    are the only loop.

    :returns: edges in both directions; ``label`` float32 (N, labels) 0/1 memberships.
    """
    gen = torch.Generator().manual_seed(seed)
    weight = (torch.arange(labels, dtype=torch.float64) + 1) ** -popularity  # (C,)
    count = (1 + torch.poisson(torch.full((nodes,), extra_labels, dtype=torch.float64),
                               generator=gen)).clamp(max=labels).long()  # (N,)
    keys = weight.log() - torch.log(-torch.log(torch.rand(nodes, labels, generator=gen,
                                                          dtype=torch.float64)))
    member = keys.argsort(1, descending=True).argsort(1) < count[:, None]  # (N, C)
    u01 = torch.rand(nodes, generator=gen, dtype=torch.float64)
    theta = ((1.0 - u01) ** (-1.0 / (exponent - 1.0))).clamp(max=(2.0 * edges) ** 0.5)
    label_of, node_of = member.T.nonzero(as_tuple=True)  # (M,) memberships, by label
    cum = torch.cumsum(theta[node_of], 0)  # (M,) running weight, label by label
    end = torch.cumsum(member.sum(0), 0)  # (C,)
    hi_mass = cum[end - 1]  # (C,) every label has members at these sizes
    lo_mass = torch.cat([torch.zeros(1, dtype=torch.float64), hi_mass[:-1]])
    node_cum = torch.cumsum(theta, 0)  # (N,)
    # the memberships of each node, for "a random label of u": sorted by node
    by_node = torch.argsort(node_of, stable=True)  # (M,)
    first = torch.cumsum(count, 0) - count  # (N,) first membership of each node in by_node
    kept = torch.zeros(0, dtype=torch.long)
    while kept.numel() < edges:
        m = 2 * (edges - kept.numel()) + 1000
        x = torch.rand(m, generator=gen, dtype=torch.float64) * node_cum[-1]
        u = torch.searchsorted(node_cum, x, right=True).clamp(max=nodes - 1)  # (m,)
        pick = first[u] + (torch.rand(m, generator=gen) * count[u]).long()
        lab = label_of[by_node[pick]]  # (m,) one label of u
        y = lo_mass[lab] + torch.rand(m, generator=gen, dtype=torch.float64) \
            * (hi_mass[lab] - lo_mass[lab])
        v_in = node_of[torch.searchsorted(cum, y, right=True).clamp(max=cum.numel() - 1)]
        v_out = torch.searchsorted(node_cum, torch.rand(m, generator=gen, dtype=torch.float64)
                                   * node_cum[-1], right=True).clamp(max=nodes - 1)
        v = torch.where(torch.rand(m, generator=gen) < within, v_in, v_out)
        key = torch.minimum(u, v) * nodes + torch.maximum(u, v)
        key = torch.cat([kept, key[u != v]])
        uniq, inverse = torch.unique(key, return_inverse=True)
        order = torch.full((uniq.numel(),), key.numel(), dtype=torch.long)
        order.scatter_reduce_(0, inverse, torch.arange(key.numel()), reduce="amin")
        kept = uniq[torch.sort(order).indices][:edges]  # first drawn first
    lo, hi = kept // nodes, kept % nodes
    return Generated(src=torch.cat([lo, hi]), dst=torch.cat([hi, lo]), num_nodes=nodes,
                     label=member.float())


def make_case(name: str, quick: bool, seed: int) -> tuple[object, int, int]:
    """The graph of a case: (Generated, nodes, classes)."""
    if name == "sbm":
        nodes, classes = (2_000 if quick else 20_000), 10
        size = nodes / classes
        return sbm(nodes, classes, 0, p_in=5 / size, p_out=5 / (nodes - size), seed=seed), \
            nodes, classes
    nodes, classes = (2_000 if quick else 10_000), 36
    return overlapping_communities(nodes, classes, 70.0, within=0.15, seed=seed), nodes, classes


def gensim_embeddings(sentences: list[list[str]], nodes: int, workers: int,
                      seed: int) -> tuple[torch.Tensor, float]:
    """Word2Vec(sg=1) on token lists: (N, D) embeddings (0 for unseen nodes), seconds."""
    from gensim.models import Word2Vec

    w2v = Word2Vec(vector_size=DIM, window=WINDOW, sg=1, hs=0, negative=NEGATIVES,
                   workers=workers, min_count=1, sample=0, epochs=1, seed=seed)
    t0 = time.perf_counter()
    w2v.build_vocab(sentences)
    w2v.train(sentences, total_examples=len(sentences), epochs=1)
    seconds = time.perf_counter() - t0
    emb = torch.zeros(nodes, DIM)
    seen = [int(k) for k in w2v.wv.index_to_key]
    emb[torch.tensor(seen)] = torch.from_numpy(w2v.wv.vectors).float()
    return emb, seconds


def mean(values: list[float]) -> float:
    return statistics.fmean(values)


def std(values: list[float]) -> float:
    """Sample standard deviation (0 for one value)."""
    return statistics.stdev(values) if len(values) > 1 else 0.0


def seconds(values: list[float]) -> str:
    """``12.3s`` for one training, ``12.3s (mean of 12.0 12.5 12.4)`` for several."""
    if len(values) == 1:
        return f"{values[0]:.1f}s"
    return f"{mean(values):.1f}s (mean of {' '.join(f'{v:.1f}' for v in values)})"


def pecanpy_walks(src: torch.Tensor, dst: torch.Tensor, nodes: int, workers: int,
                  seed: int) -> tuple[list[list[str]], float]:
    """PecanPy PreComp p/q walks from every node (10 per node): token lists, seconds."""
    numpy_aliases_for_nptyping()
    import numpy as np
    import scipy.sparse as sp
    from pecanpy import pecanpy as pp

    def graph() -> object:
        g = pp.PreComp(p=P, q=Q, workers=workers, verbose=False, random_state=seed)
        csr = sp.csr_matrix((np.ones(src.numel(), dtype=np.float32),
                             (src.numpy(), dst.numpy())), shape=(nodes, nodes))
        csr.sum_duplicates()
        g.set_node_ids([str(i) for i in range(nodes)])
        g.indptr, g.indices = csr.indptr.astype(np.uint64), csr.indices.astype(np.uint32)
        g.data = np.ones(len(g.indices), dtype=np.float32)
        return g

    import numba
    numba.set_num_threads(workers)
    t0 = time.perf_counter()
    walks = graph().simulate_walks(num_walks=WALKS_PER_NODE, walk_length=STEPS)
    return walks, time.perf_counter() - t0


def warm_walks() -> float:
    """Compile (or load from Numba's cache) graphflow's walk kernels, serial and parallel,
    on a small graph; the seconds that took."""
    ring = torch.arange(4096)
    graph = from_edges(torch.cat([ring, (ring + 1) % 4096]),
                       torch.cat([(ring + 1) % 4096, ring]), 4096)
    t0 = time.perf_counter()
    for threads in (1, 2):
        with native.threads(threads):
            for p, q in ((1.0, 1.0), (P, Q)):
                random_walks(graph, ring, 4, p=p, q=q, generator=torch.Generator())
    return time.perf_counter() - t0


def warm_pecanpy(workers: int) -> float:
    """Compile PecanPy's numba kernels on a tiny graph; the seconds that took."""
    ring = torch.arange(20)
    t0 = time.perf_counter()
    pecanpy_walks(torch.cat([ring, (ring + 1) % 20]), torch.cat([(ring + 1) % 20, ring]), 20,
                  workers, 0)
    return time.perf_counter() - t0


def evaluate(emb: torch.Tensor, labels: torch.Tensor, train: torch.Tensor, test: torch.Tensor,
             classes: int, seed: int) -> dict[str, float]:
    with intra_op_threads(1):
        r = classify(emb, labels, train, test, num_classes=classes,
                     generator=torch.Generator().manual_seed(seed))
    return {"acc": round(r.accuracy, 4), "micro_f1": round(r.micro_f1, 4),
            "macro_f1": round(r.macro_f1, 4), "l2": r.l2}


def bench_end_to_end(case: str, quick: bool, device: torch.device, cores_: int,
                     train_workers: int | None, seed: int, train_seeds: int = 1,
                     step_walks: int | None = None) -> dict:
    data, nodes, classes = make_case(case, quick, seed)
    graph = from_edges(data.src, data.dst, nodes).to(device)
    mean_degree = graph.num_edges / nodes
    gen = torch.Generator(device=device).manual_seed(seed)
    starts = torch.arange(nodes, device=device).repeat(WALKS_PER_NODE)
    starts = starts[torch.randperm(starts.numel(), generator=gen, device=device)]
    plan = cores.plan("walks", cores_, {"workers": train_workers}, measured=SPLITS)
    batch = step_walks or default_step_walks(device)  # as the skipgram task
    workers, threads = hogwild_split(plan.workers, plan.worker_threads, device, nodes,
                                     batch * (STEPS + 1),
                                     forced_workers=train_workers is not None)  # as the task
    print(f"(b) {case}: {nodes} nodes, {graph.num_edges} directed edges (mean degree "
          f"{mean_degree:.1f}), {classes} labels; graphflow skip-gram: {batch} walks a step, "
          f"{workers} Hogwild "
          f"workers x {threads} threads ({plan.source}), peers: {cores_} workers",
          flush=True)

    # graphflow: walks (on the core budget, as the sampler in the skipgram task) + skip-gram
    with intra_op_threads(1), native.threads(cores_):
        t0 = time.perf_counter()
        walks = torch.cat([random_walks(graph, b, STEPS, p=P, q=Q, generator=gen)
                           for b in starts.split(100_000)])
        sync(device)
        walk_s = time.perf_counter() - t0
    tokens = int((walks >= 0).sum())
    print(f"    graphflow walks {walk_s:.1f}s", flush=True)

    # DGL walks
    dgl_graph = dgl.graph((data.src, data.dst), num_nodes=nodes)
    dgl_graph.create_formats_()  # before timing, as graphflow's CSR is prepared
    dgl.seed(seed)
    t0 = time.perf_counter()
    traces = torch.cat([dgl.sampling.node2vec_random_walk(dgl_graph, b, P, Q, STEPS)
                        for b in starts.cpu().split(100_000)])
    dgl_walk_s = time.perf_counter() - t0
    dgl_sentences = [[str(v) for v in row if v >= 0] for row in traces.tolist()]
    del traces
    print(f"    DGL walks {dgl_walk_s:.1f}s", flush=True)

    # PecanPy walks
    pecan_sentences, pecan_walk_s = pecanpy_walks(data.src, data.dst, nodes, cores_, seed)
    print(f"    PecanPy walks {pecan_walk_s:.1f}s", flush=True)

    # the trainings: train_seeds rounds, the peers' order alternating (benchmarks/records.py)
    settings = SkipGramSettings(dim=DIM, window=WINDOW, negatives=NEGATIVES)
    embs: dict[str, list[torch.Tensor]] = {"graphflow": [], "dgl_gensim": [],
                                           "pecanpy_gensim": []}

    def train_ours(r: int) -> None:
        train_gen = torch.Generator(device=device).manual_seed(seed + r)
        with intra_op_threads(threads):
            model = SkipGram(nodes, settings, graph.in_strength(), device, train_gen,
                             graph=graph)  # as the skipgram task: the default start
            model.fit(walks, LR, 0, walks.shape[0], batch, workers=workers,
                      worker_threads=threads)  # what the skipgram task runs
            sync(device)
        embs["graphflow"].append(model.embeddings())

    def train_gensim(name: str, sentences: list[list[str]]):
        def run(r: int) -> None:
            embs[name].append(gensim_embeddings(sentences, nodes, cores_, seed + r)[0])
        return run

    def progress(name: str, r: int, seconds_: float) -> None:
        print(f"    training {r + 1}/{train_seeds} {name}: {seconds_:.1f}s", flush=True)

    train_s = records.alternate({"graphflow": train_ours,
                                 "dgl_gensim": train_gensim("dgl_gensim", dgl_sentences),
                                 "pecanpy_gensim": train_gensim("pecanpy_gensim",
                                                                pecan_sentences)},
                                train_seeds, on_time=progress)
    del dgl_sentences, pecan_sentences
    ours = {"walk_s": walk_s, "train_s": train_s["graphflow"], "embs": embs["graphflow"]}
    dgl_peer = {"walk_s": dgl_walk_s, "train_s": train_s["dgl_gensim"],
                "embs": embs["dgl_gensim"]}
    pecan_peer = {"walk_s": pecan_walk_s, "train_s": train_s["pecanpy_gensim"],
                  "embs": embs["pecanpy_gensim"]}
    print(f"    graphflow skip-gram {seconds(train_s['graphflow'])} "
          f"({tokens / mean(train_s['graphflow']) / 1e3:.0f}k tokens/s); gensim on DGL's walks "
          f"{seconds(train_s['dgl_gensim'])}, on PecanPy's {seconds(train_s['pecanpy_gensim'])}",
          flush=True)

    labels = data.label
    split = torch.Generator().manual_seed(seed)
    train, test = random_split(torch.arange(nodes), 0.5, split)  # one split for every training
    out: dict[str, object] = {f"{case}_nodes": nodes, f"{case}_edges": graph.num_edges,
                              f"{case}_tokens": tokens,
                              f"{case}_train_workers": workers, f"{case}_train_threads": threads,
                              f"{case}_train_seeds": train_seeds}
    totals, macro = {}, {}
    spread = "" if train_seeds == 1 else f" (mean +- std over {train_seeds} training seeds)"
    print(f"    end to end = walks + mean training time; F1{spread}:", flush=True)
    for name, peer in (("graphflow", ours), ("dgl_gensim", dgl_peer),
                       ("pecanpy_gensim", pecan_peer)):
        runs = [evaluate(emb, labels, train, test, classes, seed) for emb in peer["embs"]]
        total = peer["walk_s"] + mean(peer["train_s"])
        totals[name] = total
        out.update({f"{case}_{name}_walk_s": round(peer["walk_s"], 2),
                    f"{case}_{name}_train_s": round(mean(peer["train_s"]), 2),
                    f"{case}_{name}_train_s_runs": [round(t, 2) for t in peer["train_s"]],
                    f"{case}_{name}_total_s": round(total, 2)})
        for k in ("acc", "micro_f1", "macro_f1"):
            values = [run[k] for run in runs]
            out[f"{case}_{name}_{k}"] = round(mean(values), 4)  # the mean over training seeds
            out[f"{case}_{name}_{k}_std"] = round(std(values), 4)
            out[f"{case}_{name}_{k}_runs"] = values
        out[f"{case}_{name}_l2_runs"] = [run["l2"] for run in runs]  # the penalty CV chose
        macro[name] = out[f"{case}_{name}_macro_f1"]
        print(f"    {name:15s} {total:6.1f}s  acc {out[f'{case}_{name}_acc']:.4f}  "
              f"micro-F1 {out[f'{case}_{name}_micro_f1']:.4f} +- "
              f"{out[f'{case}_{name}_micro_f1_std']:.4f}  "
              f"macro-F1 {out[f'{case}_{name}_macro_f1']:.4f} +- "
              f"{out[f'{case}_{name}_macro_f1_std']:.4f}  "
              f"[{' '.join(f'{v:.4f}' for v in out[f'{case}_{name}_macro_f1_runs'])}]  "
              f"L2 {' '.join(f'{v:g}' for v in out[f'{case}_{name}_l2_runs'])}", flush=True)
    faster = min(("dgl_gensim", "pecanpy_gensim"), key=totals.get)
    ratio = totals[faster] / totals["graphflow"]
    out[f"{case}_faster_peer"] = faster
    out[f"{case}_ratio"] = round(ratio, 2)
    out[f"{case}_train_ratio"] = round(
        min(mean(dgl_peer["train_s"]), mean(pecan_peer["train_s"])) / mean(ours["train_s"]), 2)
    best_peer = max(("dgl_gensim", "pecanpy_gensim"), key=macro.get)
    met = macro["graphflow"] >= macro[best_peer]
    out[f"{case}_macro_f1_met"] = met
    out[f"{case}_macro_f1_margin"] = round(macro["graphflow"] - macro[best_peer], 4)
    se = margin_se(out[f"{case}_graphflow_macro_f1_runs"], out[f"{case}_{best_peer}_macro_f1_runs"])
    out[f"{case}_macro_f1_margin_se"] = None if se is None else round(se, 4)
    print(f"    end to end: {ratio:.2f}x the faster peer ({faster})", flush=True)
    print(f"    macro-F1 (means over {train_seeds} training seed{'s' * (train_seeds > 1)}): "
          f"graphflow {macro['graphflow']:.4f} vs the best peer {best_peer} "
          f"{macro[best_peer]:.4f}: {'at least the peer' if met else 'BELOW the peer'} "
          f"({macro['graphflow'] - macro[best_peer]:+.4f}"
          f"{'' if se is None else f' +- {se:.4f}, the standard error of the difference'})",
          flush=True)
    return out


SOCIAL_NODES, SOCIAL_EDGES, SOCIAL_LABELS = 10_312, 333_983, 39
SOCIAL_WITHIN = 0.15
"""Share of the social case's edges drawn inside a community: a weakly clustered graph, as
social networks of these statistics are (PecanPy + gensim: macro-F1 0.29 at 0.15, 0.13 at
0.1; docs/node2vec.md)."""


def graphflow_end_to_end(graph: object, nodes: int, device: torch.device, workers: int,
                         seed: int) -> tuple[torch.Tensor, float, float]:
    """graphflow's walks (seed ``seed``) and skip-gram on ``workers`` Hogwild workers of one
    thread each, at the task's defaults: (N, D) embeddings, walk seconds, training seconds."""
    gen = torch.Generator(device=device).manual_seed(seed)
    starts = torch.arange(nodes, device=device).repeat(WALKS_PER_NODE)
    starts = starts[torch.randperm(starts.numel(), generator=gen, device=device)]
    with intra_op_threads(1), native.threads(workers):  # the stage's cores, as the sampler
        t0 = time.perf_counter()
        walks = torch.cat([random_walks(graph, b, STEPS, p=P, q=Q, generator=gen)
                           for b in starts.split(100_000)])
        sync(device)
        walk_s = time.perf_counter() - t0
    settings = SkipGramSettings(dim=DIM, window=WINDOW, negatives=NEGATIVES)
    with intra_op_threads(1):
        t0 = time.perf_counter()
        model = SkipGram(nodes, settings, graph.in_strength(), device,
                         torch.Generator(device=device).manual_seed(seed), graph=graph)
        model.fit(walks, LR, 0, walks.shape[0], default_step_walks(device), workers=workers,
                  worker_threads=1)
        sync(device)
        train_s = time.perf_counter() - t0
    return model.embeddings(), walk_s, train_s


def bench_social(quick: bool, device: torch.device, seed: int, seeds: int,
                 workers_list: list[int]) -> dict:
    """The ``social`` case: graphflow against PecanPy walks + gensim, each end to end (its own
    walks and training, seed ``seed + r``), with 1 and 2 workers each, the order of the two
    sides alternating from seed to seed; medians over the seeds."""
    nodes, edges = (2_000, 64_775) if quick else (SOCIAL_NODES, SOCIAL_EDGES)
    data = social_communities(nodes, SOCIAL_LABELS, edges, within=SOCIAL_WITHIN, seed=seed)
    graph = from_edges(data.src, data.dst, nodes).to(device)
    degree = graph.out_degrees()
    print(f"(c) social: {nodes} nodes, {edges} undirected edges, degree max {int(degree.max())} "
          f"median {int(degree.median())}, {SOCIAL_LABELS} labels "
          f"({float(data.label.sum(1).mean()):.2f} per node); {seeds} seeds per side, "
          f"the side that goes first alternating", flush=True)
    train, test = random_split(torch.arange(nodes), 0.5, torch.Generator().manual_seed(seed))
    out: dict[str, object] = {"social_nodes": nodes, "social_edges": edges,
                              "social_within": SOCIAL_WITHIN, "social_seeds": seeds}
    for workers in workers_list:
        runs: dict[str, list[dict[str, float]]] = {"graphflow": [], "pecanpy_gensim": []}
        for r in range(seeds):
            order = ["graphflow", "pecanpy_gensim"][:: 1 if r % 2 == 0 else -1]
            for side in order:
                if side == "graphflow":
                    emb, walk_s, train_s = graphflow_end_to_end(graph, nodes, device, workers,
                                                                seed + r)
                else:
                    sentences, walk_s = pecanpy_walks(data.src, data.dst, nodes, workers,
                                                      seed + r)
                    emb, train_s = gensim_embeddings(sentences, nodes, workers, seed + r)
                    del sentences
                run = evaluate(emb, data.label, train, test, SOCIAL_LABELS, seed)
                run.update(walk_s=round(walk_s, 2), train_s=round(train_s, 2),
                           total_s=round(walk_s + train_s, 2))
                runs[side].append(run)
                print(f"    workers {workers}  seed {seed + r}  {side:15s} walks {walk_s:5.1f}s "
                      f"+ training {train_s:5.1f}s  macro-F1 {run['macro_f1']:.4f}  "
                      f"micro-F1 {run['micro_f1']:.4f}", flush=True)
        for side, values in runs.items():
            for k in ("macro_f1", "micro_f1", "total_s", "walk_s", "train_s"):
                out[f"social_w{workers}_{side}_{k}"] = statistics.median(v[k] for v in values)
            out[f"social_w{workers}_{side}_macro_f1_runs"] = [v["macro_f1"] for v in values]
            out[f"social_w{workers}_{side}_total_s_runs"] = [v["total_s"] for v in values]
        ours, theirs = (f"social_w{workers}_{side}" for side in runs)
        margin = out[f"{ours}_macro_f1"] - out[f"{theirs}_macro_f1"]
        ratio = out[f"{theirs}_total_s"] / out[f"{ours}_total_s"]
        out[f"social_w{workers}_macro_f1_margin"] = round(margin, 4)
        out[f"social_w{workers}_macro_f1_met"] = margin >= 0
        out[f"social_w{workers}_ratio"] = round(ratio, 2)
        out[f"social_w{workers}_ratio_spread"] = records.ratio_spread(
            out[f"{theirs}_total_s_runs"], out[f"{ours}_total_s_runs"])
        print(f"    workers {workers}, medians over {seeds} seeds: graphflow "
              f"{out[f'{ours}_total_s']:.1f}s macro-F1 {out[f'{ours}_macro_f1']:.4f} "
              f"[{' '.join(f'{v:.4f}' for v in out[f'{ours}_macro_f1_runs'])}], "
              f"PecanPy + gensim {out[f'{theirs}_total_s']:.1f}s macro-F1 "
              f"{out[f'{theirs}_macro_f1']:.4f} "
              f"[{' '.join(f'{v:.4f}' for v in out[f'{theirs}_macro_f1_runs'])}]: "
              f"{'at least the peer' if margin >= 0 else 'BELOW the peer'} ({margin:+.4f}), "
              f"{ratio:.2f}x its speed end to end", flush=True)
    return out


def margin_se(ours: list[float], theirs: list[float]) -> float | None:
    """Standard error of the difference of two means of independent trainings
    (``sqrt(s1^2 / n1 + s2^2 / n2)``), or None with fewer than two trainings a peer."""
    if len(ours) < 2 or len(theirs) < 2:
        return None
    return (std(ours) ** 2 / len(ours) + std(theirs) ** 2 / len(theirs)) ** 0.5


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small graphs, under a minute")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=0, help="CPU threads for torch and DGL")
    p.add_argument("--train-workers", type=int, default=None,
                   help="graphflow's Hogwild skip-gram workers (default: the core policy's, "
                        "one per core)")
    p.add_argument("--cases", default="sbm,dense,social",
                   help="end-to-end cases: sbm, dense, social")
    p.add_argument("--social-workers", default="1,2",
                   help="the social case's worker counts (each side gets as many)")
    p.add_argument("--social-seeds", type=int, default=3,
                   help="the social case's end-to-end runs per side and worker count")
    p.add_argument("--walk-nodes", type=int, default=None)
    p.add_argument("--walk-edges", type=int, default=None)
    p.add_argument("--walk-seeds", type=int, default=None)
    p.add_argument("--walk-reps", type=int, default=5,
                   help="(a): timed repetitions of each side, alternating which goes first")
    p.add_argument("--skip-walks", action="store_true")
    p.add_argument("--skip-e2e", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-seeds", type=int, default=None,
                   help="trainings per peer on the same walks, with training seeds seed, "
                        "seed + 1, ...; F1 is judged on their means (default 3, --quick 2)")
    p.add_argument("--step-walks", type=int, default=None,
                   help="graphflow's walks per skip-gram update (default: the skipgram task's, "
                        "64 on the CPU, 512 on a GPU)")
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/node2vec/ "
                        "(benchmarks/figures.py renders them)")
    p.add_argument("--allocator", choices=["retain", "system"], default="retain",
                   help="malloc setting of the whole process, for every peer "
                        "(graphflow.runtime.allocator; default retain, as graphflow run sets it)")
    args = p.parse_args()
    if args.train_seeds is None:
        args.train_seeds = 2 if args.quick else 3
    if args.train_seeds < 1:
        p.error(f"--train-seeds must be at least 1, got {args.train_seeds}")
    if args.walk_reps < 1:
        p.error(f"--walk-reps must be at least 1, got {args.walk_reps}")
    if args.step_walks is not None and args.step_walks < 1:
        p.error(f"--step-walks must be at least 1, got {args.step_walks}")
    missing = [name for name in ("gensim", "pecanpy") if importlib.util.find_spec(name) is None]
    if missing and not args.skip_e2e:
        p.error(f"the end-to-end cases need {' and '.join(missing)} (the bench extra, in an "
                "environment of its own: docs/node2vec.md); --skip-e2e runs the walks alone")
    load_before = records.load()
    malloc = allocator.apply(args.allocator)["allocator"]
    print(f"malloc: {malloc}, for the whole process (every peer)", flush=True)
    machine.set_threads(args.threads)
    _, splits, calibration = machine.choices()
    SPLITS.clear()
    SPLITS.update(splits)
    info = machine.show(calibration)
    device = torch.device(args.device)
    figures: dict[str, object] = {"device": str(device), "threads": torch.get_num_threads(),
                                  "allocator": malloc, "quick": args.quick}
    figures["walk_jit_s"] = round(warm_walks(), 2)
    if not args.skip_walks:
        walk_figures = bench_walks(
            args.walk_nodes or (100_000 if args.quick else 1_000_000),
            args.walk_edges or (1_000_000 if args.quick else 10_000_000),
            args.walk_seeds or (5_000 if args.quick else 50_000), device, args.seed,
            args.walk_reps)
        figures.update(walk_figures)
        if args.record:  # a record of its own: benchmarks/figures.py's node2vec_walks table
            records.write("node2vec_walks", {**walk_figures, "device": str(device),
                                             "machine": info}, load_before=load_before)
    if not args.skip_e2e:
        figures["pecanpy_jit_s"] = round(warm_pecanpy(torch.get_num_threads()), 2)
        for case in (c.strip() for c in args.cases.split(",")):
            if case == "social":
                figures.update(bench_social(args.quick, device, args.seed, args.social_seeds,
                                            [int(w) for w in args.social_workers.split(",")]))
                continue
            figures.update(bench_end_to_end(case, args.quick, device,
                                            torch.get_num_threads(), args.train_workers,
                                            args.seed, args.train_seeds, args.step_walks))
    figures["machine"] = info
    if args.record and not args.skip_e2e:  # the walks alone have their record above
        records.write("node2vec", figures, load_before=load_before)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
