"""Node2Vec speed and quality: graphflow's walks vs DGL's, graphflow's skip-gram vs gensim's.

Everything runs in one process, peers side by side on the same data.

(a) **Walks.** An R-MAT graph (``graphflow.generate.rmat``: power-law degrees, hubs, duplicate
    edges), made undirected: 1M nodes and 10M directed edges (``--quick``: 100k / 1M). The same
    start nodes (``--walk-seeds`` random nodes with edges) walk 80 steps with p = 0.25, q = 4
    through graphflow's ``random_walks`` (one thread, as the ``node2vec`` sampler runs) and
    DGL's ``dgl.sampling.node2vec_random_walk`` (C++). Figure: walk steps per second (taken
    steps, padding excluded); ``walk_ratio`` = graphflow / DGL. The uniform path (p = q = 1)
    against ``dgl.sampling.random_walk`` is reported too, and graphflow's one-off preparation
    (CSR and edge hash set) separately.

(b) **End to end.** A labelled SBM (``graphflow.generate.sbm``; 20k nodes, 10 classes, mean
    degree 10 with half the edges across classes; ``--quick``: 2k nodes), 10 walks of 80
    steps per node (p = 0.25, q = 4), window 10, 128 dimensions, 5 negatives, one epoch, no
    subsampling. graphflow walks once, and both trainers learn from the very same walks:
    graphflow's blocked skip-gram (``graphflow.walks.skipgram``, products in bfloat16 where
    the CPU has it) and gensim's ``Word2Vec(sg=1, negative=5, workers=2,
    min_count=1, sample=0)`` (C, Hogwild threads). DGL's node2vec walks for the same start
    nodes are timed too: the reference pipeline is DGL's walks + gensim, graphflow's is its
    walks + its skip-gram, and ``ratio`` = reference time / graphflow time. Also reported:
    ``train_ratio`` (training alone) and ``same_walks_ratio`` (graphflow's walk time on both
    sides). Quality: logistic regression (``graphflow.walks.evaluate.classify``, penalty by
    5-fold cross-validation) on half the nodes, accuracy on the other half, the same split for
    both. At 1M nodes (b) would take gensim about an hour on 2 cores (~200-400k tokens/s
    here), so it runs at 20k nodes (16M walk tokens).

    python benchmarks/node2vec.py [--quick] [--device cpu|cuda] [--threads N]

``--threads`` sets torch's and DGL's CPU threads (default: torch's); graphflow's walks use one
thread (the samplers' default) and its training ``--train-threads`` (default: ``--threads``,
so by default two threads against gensim's two workers). The last output line is one JSON
object with the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.generate import rmat, sbm  # noqa: E402
from graphflow.sampling.sampler import intra_op_threads  # noqa: E402
from graphflow.walks.csr import from_edges  # noqa: E402
from graphflow.walks.evaluate import classify, random_split  # noqa: E402
from graphflow.walks.node2vec import random_walks  # noqa: E402
from graphflow.walks.skipgram import SkipGram, SkipGramSettings  # noqa: E402
from graphflow_plugins.embeddings.skipgram import SkipGramOptions  # noqa: E402

P, Q = 0.25, 4.0
STEPS = 80
WALKS_PER_NODE, WINDOW, DIM, NEGATIVES = 10, 10, 128, 5
LR = SkipGramOptions().lr  # the skipgram task's default (word2vec's 0.025)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def taken_steps(walks: torch.Tensor) -> int:
    return int((walks[:, 1:] >= 0).sum())


def bench_walks(nodes: int, edges: int, n_seeds: int, device: torch.device, seed: int) -> dict:
    t0 = time.perf_counter()
    g = rmat(nodes, edges // 2, seed=seed)
    src, dst = torch.cat([g.src, g.dst]), torch.cat([g.dst, g.src])
    gen_s = time.perf_counter() - t0
    with intra_op_threads(1):
        t0 = time.perf_counter()
        graph = from_edges(src, dst, nodes).to(device).with_edge_set()
        sync(device)
        prepare_s = time.perf_counter() - t0
    dgl_graph = dgl.graph((src, dst), num_nodes=nodes)
    has_edges = (graph.out_degrees() > 0).nonzero().squeeze(1).cpu()
    pick = torch.randperm(has_edges.numel(), generator=torch.Generator().manual_seed(seed))
    seeds = has_edges[pick[:n_seeds]]
    gen = torch.Generator(device=device).manual_seed(seed)
    out: dict[str, float] = {"walk_graph_nodes": nodes, "walk_graph_edges": int(src.numel()),
                             "walk_seeds": int(seeds.numel()), "generate_s": round(gen_s, 2),
                             "prepare_s": round(prepare_s, 2)}
    for name, p, q in (("biased", P, Q), ("uniform", 1.0, 1.0)):
        with intra_op_threads(1):
            t0 = time.perf_counter()
            walks = random_walks(graph, seeds.to(device), STEPS, p=p, q=q, generator=gen)
            sync(device)
            ours = time.perf_counter() - t0
        ours_steps = taken_steps(walks)
        dgl.seed(seed)
        t0 = time.perf_counter()
        if name == "biased":
            traces = dgl.sampling.node2vec_random_walk(dgl_graph, seeds, p, q, STEPS)
        else:
            traces, _ = dgl.sampling.random_walk(dgl_graph, seeds, length=STEPS)
        theirs = time.perf_counter() - t0
        ours_rate, dgl_rate = ours_steps / ours, taken_steps(traces) / theirs
        out[f"{name}_steps_per_s"] = round(ours_rate)
        out[f"dgl_{name}_steps_per_s"] = round(dgl_rate)
        out[f"{name}_ratio"] = round(ours_rate / dgl_rate, 2)
        print(f"(a) {name:7s} p={p} q={q}: graphflow {ours_rate / 1e6:.2f}M steps/s "
              f"({ours:.2f}s), DGL {dgl_rate / 1e6:.3f}M steps/s ({theirs:.2f}s): "
              f"{ours_rate / dgl_rate:.1f}x", flush=True)
    out["walk_ratio"] = out.pop("biased_ratio")
    return out


def bench_end_to_end(nodes: int, device: torch.device, train_threads: int, seed: int) -> dict:
    classes = 10
    size = nodes / classes
    data = sbm(nodes, classes, 0, p_in=5 / size, p_out=5 / (nodes - size), seed=seed)
    graph = from_edges(data.src, data.dst, nodes).to(device)
    gen = torch.Generator(device=device).manual_seed(seed)
    starts = torch.arange(nodes, device=device).repeat(WALKS_PER_NODE)
    starts = starts[torch.randperm(starts.numel(), generator=gen, device=device)]
    with intra_op_threads(1):
        t0 = time.perf_counter()
        walks = torch.cat([random_walks(graph, b, STEPS, p=P, q=Q, generator=gen)
                           for b in starts.split(100_000)])
        sync(device)
        walk_s = time.perf_counter() - t0
    tokens = int((walks >= 0).sum())
    dgl_graph = dgl.graph((data.src, data.dst), num_nodes=nodes)
    dgl.seed(seed)
    t0 = time.perf_counter()
    for b in starts.cpu().split(100_000):
        dgl.sampling.node2vec_random_walk(dgl_graph, b, P, Q, STEPS)
    dgl_walk_s = time.perf_counter() - t0
    print(f"(b) SBM {nodes} nodes, {graph.num_edges} edges: {walks.shape[0]} walks, "
          f"{tokens / 1e6:.1f}M tokens in {walk_s:.1f}s (DGL: {dgl_walk_s:.1f}s)", flush=True)

    settings = SkipGramSettings(dim=DIM, window=WINDOW, negatives=NEGATIVES)
    batch = 2048 if device.type == "cuda" else 64
    with intra_op_threads(train_threads):
        t0 = time.perf_counter()
        model = SkipGram(nodes, settings, graph.in_strength(), device, gen)
        model.fit(walks, LR, 0, walks.shape[0], batch)  # what the skipgram task runs
        sync(device)
        ours_s = time.perf_counter() - t0
    ours_emb = model.embeddings()
    print(f"(b) graphflow skip-gram: {ours_s:.1f}s ({tokens / ours_s / 1e3:.0f}k tokens/s)",
          flush=True)

    from gensim.models import Word2Vec

    t0 = time.perf_counter()
    sentences = [[str(v) for v in row if v >= 0] for row in walks.cpu().tolist()]
    convert_s = time.perf_counter() - t0
    w2v = Word2Vec(vector_size=DIM, window=WINDOW, sg=1, hs=0, negative=NEGATIVES, workers=2,
                   min_count=1, sample=0, epochs=1, seed=seed)
    t0 = time.perf_counter()
    w2v.build_vocab(sentences)
    w2v.train(sentences, total_examples=len(sentences), epochs=1)
    gensim_s = time.perf_counter() - t0
    theirs_emb = torch.zeros(nodes, DIM)
    seen = [int(k) for k in w2v.wv.index_to_key]
    theirs_emb[torch.tensor(seen)] = torch.from_numpy(w2v.wv.vectors).float()
    print(f"(b) gensim Word2Vec: {gensim_s:.1f}s ({tokens / gensim_s / 1e3:.0f}k tokens/s; "
          f"+{convert_s:.1f}s to make token lists, not counted)", flush=True)

    labels = data.label
    split = torch.Generator().manual_seed(seed)
    train, test = random_split(torch.arange(nodes), 0.5, split)
    with intra_op_threads(1):
        ours_acc = classify(ours_emb, labels, train, test, num_classes=classes,
                            generator=torch.Generator().manual_seed(seed)).accuracy
        theirs_acc = classify(theirs_emb, labels, train, test, num_classes=classes,
                              generator=torch.Generator().manual_seed(seed)).accuracy
    ours_total, ref_total = walk_s + ours_s, dgl_walk_s + gensim_s
    ratio = ref_total / ours_total
    print(f"(b) accuracy: graphflow {ours_acc:.4f}, gensim {theirs_acc:.4f}; end to end: "
          f"graphflow {ours_total:.1f}s vs DGL walks + gensim {ref_total:.1f}s: {ratio:.2f}x "
          f"(training only {gensim_s / ours_s:.2f}x; with graphflow's walks on both sides "
          f"{(walk_s + gensim_s) / ours_total:.2f}x)", flush=True)
    return {"e2e_nodes": nodes, "e2e_edges": graph.num_edges, "e2e_tokens": tokens,
            "e2e_walk_s": round(walk_s, 2), "dgl_walk_s": round(dgl_walk_s, 2),
            "e2e_train_s": round(ours_s, 2), "gensim_train_s": round(gensim_s, 2),
            "e2e_tokens_per_s": round(tokens / ours_s), "gensim_tokens_per_s":
            round(tokens / gensim_s), "e2e_acc": round(ours_acc, 4),
            "gensim_acc": round(theirs_acc, 4), "train_ratio": round(gensim_s / ours_s, 2),
            "same_walks_ratio": round((walk_s + gensim_s) / ours_total, 2),
            "ratio": round(ratio, 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small graphs, under a minute")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=0, help="CPU threads for torch and DGL")
    p.add_argument("--train-threads", type=int, default=None,
                   help="CPU threads of graphflow's skip-gram (default: --threads, as many "
                        "as gensim's 2 workers by default)")
    p.add_argument("--walk-nodes", type=int, default=None)
    p.add_argument("--walk-edges", type=int, default=None)
    p.add_argument("--walk-seeds", type=int, default=None)
    p.add_argument("--e2e-nodes", type=int, default=None)
    p.add_argument("--skip-walks", action="store_true")
    p.add_argument("--skip-e2e", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
        dgl.utils.set_num_threads(args.threads)
    train_threads = args.train_threads if args.train_threads is not None else args.threads
    device = torch.device(args.device)
    figures: dict[str, object] = {"device": str(device), "threads": torch.get_num_threads(),
                                  "train_threads": train_threads or torch.get_num_threads(),
                                  "quick": args.quick}
    if not args.skip_walks:
        figures.update(bench_walks(
            args.walk_nodes or (100_000 if args.quick else 1_000_000),
            args.walk_edges or (1_000_000 if args.quick else 10_000_000),
            args.walk_seeds or (5_000 if args.quick else 50_000), device, args.seed))
    if not args.skip_e2e:
        figures.update(bench_end_to_end(args.e2e_nodes or (2_000 if args.quick else 20_000),
                                        device, train_threads, args.seed))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
