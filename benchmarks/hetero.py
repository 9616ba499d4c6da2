"""Typed-graph training speed: graphflow's R-GCN vs DGL's recipes, whole epochs alternating.

1. **Full graph, AIFB** (the shared ``aifb`` data, read by graphflow's ``rdf`` loader; both peers
   get the same heterograph): DGL's entity-classification recipe
   (``examples/pytorch/rgcn/entity.py``: the graph made homogeneous with per-relation
   ``norm_by_dst`` edge norms, ``nn.Embedding`` inputs, two ``RelGraphConv`` layers with
   ``regularizer="basis"``, ``num_bases`` = relations, no self-loop, hidden 16) against the same
   model in graphflow (``[model] type = "rgcn"``, ``regularizer = "basis"``, ``num_bases`` =
   relations, ``self_loop = false``, ``embed_dim = 16``) on its per-relation CSRs. Each epoch:
   forward, cross-entropy on the 140 training people, backward, Adam step.
2. **Sampled, generated typed graph** (seeded; 4 node types, 4 relations with their reverses,
   ``--edges`` in all, default 1.2M; 64 features on every type, 8 classes on ``paper``):
   DGL's recipe (``dgl.dataloading.DataLoader`` + ``NeighborSampler`` + a ``HeteroGraphConv``
   of ``GraphConv(norm="right")`` per relation with a self-loop weight and bias per layer,
   the ``rgcn-hetero`` example's layer) against graphflow's ``typed_neighbor`` sampler and
   ``rgcn`` (``regularizer = "none"``: one matrix per relation, the same parameters). Two
   layers, hidden 64, fanouts [10, 10], batch 1024, a fixed quarter of the ``paper`` nodes as
   seeds (25,000), Adam.

Both peers gather the input features the same way (``index_select``) and get the same threads (``--threads``, for torch and DGL alike), the same optimizer,
the same seeds and batch order; graph formats and per-relation CSRs are built before timing.
After untimed warm-up epochs, the peers' timed epochs run in one process, the order reversed
every epoch (DGL, graphflow; graphflow, DGL; ...: ``benchmarks/records.py``) so that load from
other processes and the state one peer leaves hit both alike. Each case prints every peer's
median epoch with its range and count (the fastest labelled ``best``). The last line is JSON;
``ratio`` = DGL's median sampled epoch / graphflow's, ``ratio_spread`` its range over epoch
pairs. ``--record`` saves the figures under ``benchmarks/results/hetero/``.

    python benchmarks/hetero.py [--threads N] [--epochs 5] [--edges 1200000] [--record]
"""

from __future__ import annotations

import argparse
import json
from types import SimpleNamespace
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from benchmarks import machine, records  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import write  # noqa: E402
from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.graph import GraphData, NodeIds  # noqa: E402
from graphflow.hetero.sampling import TypedNeighborGraph, relation_fanouts  # noqa: E402
from graphflow.nn.typed import TypedAdjacency, TypedSchema, full_input  # noqa: E402
from graphflow_plugins.models.rgcn import RGCNModel, RGCNOptions  # noqa: E402

AIFB = REPO.parent / "shared" / "data" / "aifb"
FANOUTS = [10, 10]


# ----------------------------------------------------------------------------- AIFB, full graph
def load_aifb() -> GraphData:
    from graphflow.options import parse_options
    from graphflow_plugins.loaders.rdf import RdfLoader

    values = {"path": str(AIFB / "aifb_stripped.nt.gz"),
              "entity_prefix": "http://www.aifb.uni-karlsruhe.de/",
              "train": str(AIFB / "trainingSet.tsv"), "test": str(AIFB / "testSet.tsv"),
              "entity_column": "person", "label_column": "label_affiliation"}
    options = parse_options(RdfLoader.Options, values, section="load", component="rdf",
                            source="benchmark", base_dir=REPO)
    return RdfLoader(options).load(SimpleNamespace(info=print, seed=0))


class DGLEntityRGCN(nn.Module):
    """DGL's examples/pytorch/rgcn/entity.py model."""

    def __init__(self, num_nodes: int, h_dim: int, out_dim: int, num_rels: int):
        super().__init__()
        self.emb = nn.Embedding(num_nodes, h_dim)
        self.conv1 = dgl.nn.RelGraphConv(h_dim, h_dim, num_rels, regularizer="basis",
                                         num_bases=num_rels, self_loop=False)
        self.conv2 = dgl.nn.RelGraphConv(h_dim, out_dim, num_rels, regularizer="basis",
                                         num_bases=num_rels, self_loop=False)

    def forward(self, g):
        x = self.emb.weight
        h = F.relu(self.conv1(g, x, g.edata[dgl.ETYPE], g.edata["norm"]))
        return self.conv2(g, h, g.edata[dgl.ETYPE], g.edata["norm"])


def bench_full(data: GraphData, epochs: int) -> dict[str, float]:
    g = data.graph
    target = data.meta["target"]
    labels = g.nodes[target].data["label"]
    train = g.nodes[target].data["train_mask"].nonzero().squeeze(1)
    classes = int(labels[train].max()) + 1
    # DGL: the homogeneous graph with per-relation norms, built before timing
    hg = g.clone()
    for rel in hg.canonical_etypes:
        hg.edges[rel].data["norm"] = dgl.norm_by_dst(hg, rel).unsqueeze(1)
    hg = dgl.to_homogeneous(hg, edata=["norm"])
    hg.create_formats_()
    offset = sum(g.num_nodes(t) for t in g.ntypes[: g.ntypes.index(target)])
    dgl_train = train + offset
    ref = DGLEntityRGCN(hg.num_nodes(), 16, classes, len(g.canonical_etypes))
    # graphflow: the same model on per-relation CSRs
    opts = RGCNOptions(hidden=16, regularizer="basis", num_bases=len(g.canonical_etypes),
                       self_loop=False, bias=True, embed_dim=16)
    ours = RGCNModel(opts).build_typed(TypedSchema.of(g, {}), classes)
    adj = TypedAdjacency.from_graph(g)
    x = full_input(g, {})

    def dgl_epoch(opt):
        out = ref(hg)[dgl_train]
        loss = F.cross_entropy(out, labels[train])
        opt.zero_grad()
        loss.backward()
        opt.step()

    def gf_epoch(opt):
        out = ours(adj, x)[target][train]
        loss = F.cross_entropy(out, labels[train])
        opt.zero_grad()
        loss.backward()
        opt.step()

    return alternate(epochs, (ref, dgl_epoch), (ours, gf_epoch), warmup=3)


# ----------------------------------------------------------------------- generated, sampled
def generate(edges: int, seed: int, features: int = 64, classes: int = 8,
             scale: float = 1.0) -> GraphData:
    """A seeded typed graph: papers, authors, institutions, fields; 4 relations + reverses
    (``scale`` multiplies the node counts: a smoke run)."""
    gen = torch.Generator().manual_seed(seed)
    n = {t: max(1, int(k * scale)) for t, k in
         {"paper": 100_000, "author": 60_000, "institution": 2_000, "field": 500}.items()}
    share = {("author", "writes", "paper"): 0.30, ("paper", "cites", "paper"): 0.30,
             ("paper", "has_topic", "field"): 0.15, ("author", "affiliated", "institution"): 0.05}
    per = {rel: int(edges / 2 * w / sum(share.values())) for rel, w in share.items()}
    spec = {}
    for (s, r, d), m in per.items():
        # power-law-ish sources (squared uniform), uniform destinations
        src = (torch.rand(m, generator=gen) ** 2 * n[s]).long()
        dst = torch.randint(0, n[d], (m,), generator=gen)
        spec[(s, r, d)] = (src, dst)
        spec[(d, f"rev-{r}", s)] = (dst, src)
    g = dgl.heterograph(spec, num_nodes_dict=n)
    for t in g.ntypes:
        g.nodes[t].data["feat"] = torch.randn(n[t], features, generator=gen)
    g.nodes["paper"].data["label"] = torch.randint(0, classes, (n["paper"],), generator=gen)
    ids = {t: NodeIds.identity(k) for t, k in n.items()}
    return GraphData(graph=g, ids=NodeIds.identity(g.num_nodes()), name="generated",
                     meta={"num_classes": classes, "target": "paper"}, typed_ids=ids)


class DGLRelLayer(nn.Module):
    """DGL's rgcn-hetero RelGraphConvLayer: HeteroGraphConv of GraphConv(norm="right") per
    relation (own weight, no bias), plus a self-loop weight and a bias."""

    def __init__(self, in_dim: int, out_dim: int, rels: list[str], activation=None):
        super().__init__()
        self.conv = dgl.nn.HeteroGraphConv(
            {r: dgl.nn.GraphConv(in_dim, out_dim, norm="right", bias=False,
                                 allow_zero_in_degree=True) for r in rels}, aggregate="sum")
        self.loop_weight = nn.Parameter(torch.empty(in_dim, out_dim))
        nn.init.xavier_uniform_(self.loop_weight, gain=nn.init.calculate_gain("relu"))
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.activation = activation

    def forward(self, block, x):
        x_dst = {t: v[: block.num_dst_nodes(t)] for t, v in x.items()}
        out = self.conv(block, (x, x_dst))
        out = {t: h + x_dst[t] @ self.loop_weight + self.bias for t, h in out.items()}
        return {t: self.activation(h) for t, h in out.items()} if self.activation else out


class DGLHeteroRGCN(nn.Module):
    def __init__(self, in_dim, hidden, out_dim, rels):
        super().__init__()
        self.layers = nn.ModuleList([DGLRelLayer(in_dim, hidden, rels, F.relu),
                                     DGLRelLayer(hidden, out_dim, rels)])

    def forward(self, blocks, x):
        h = x
        for layer, block in zip(self.layers, blocks):
            h = layer(block, h)
        return h


def bench_sampled(data: GraphData, epochs: int, batch: int, seed: int) -> dict[str, float]:
    g = data.graph
    g.create_formats_()
    target = "paper"
    labels = g.nodes[target].data["label"]
    # a quarter of the papers as training seeds (a fixed seeded draw), as a train split
    pick = torch.randperm(g.num_nodes(target), generator=torch.Generator().manual_seed(seed))
    seeds = pick[: g.num_nodes(target) // 4].sort().values
    feats = {t: g.nodes[t].data["feat"] for t in g.ntypes}
    classes = int(data.meta["num_classes"])
    # DGL's recipe
    ref = DGLHeteroRGCN(64, 64, classes, g.etypes)
    sampler = dgl.dataloading.NeighborSampler(FANOUTS)
    # graphflow: the typed sampler's CSCs built before timing
    graph = TypedNeighborGraph(g)
    fanouts = relation_fanouts(FANOUTS, graph.relations)
    ours = RGCNModel(RGCNOptions(hidden=64, regularizer="none", embed_dim=64)).build_typed(
        TypedSchema.of(g, feats), classes)
    order_gen = {"dgl": torch.Generator().manual_seed(seed),
                 "graphflow": torch.Generator().manual_seed(seed)}
    edges = {"dgl": 0, "graphflow": 0}

    def dgl_epoch(opt):
        order = torch.randperm(seeds.shape[0], generator=order_gen["dgl"])
        loader = dgl.dataloading.DataLoader(g, {target: seeds[order]}, sampler, batch_size=batch,
                                            shuffle=False, drop_last=False, num_workers=0)
        for input_nodes, output_nodes, blocks in loader:
            x = {t: feats[t].index_select(0, ids) for t, ids in input_nodes.items()}
            out = ref(blocks, x)[target]
            loss = F.cross_entropy(out, labels[output_nodes[target]])
            opt.zero_grad()
            loss.backward()
            opt.step()
            edges["dgl"] += sum(b.num_edges() for b in blocks)

    def gf_epoch(opt):
        for mb in graph.iterate(target, seeds, fanouts, batch, order_gen["graphflow"]):
            x = {t: feats[t].index_select(0, ids) for t, ids in mb.input_nodes.items()}
            out = ours(mb.adjs, x)[target]
            loss = F.cross_entropy(out, labels[mb.seeds])
            opt.zero_grad()
            loss.backward()
            opt.step()
            edges["graphflow"] += sum(a.nnz for a in mb.adjs)

    figures = alternate(epochs, (ref, dgl_epoch), (ours, gf_epoch), warmup=1)
    figures["sampled_edges_per_epoch"] = {k: v // (epochs + 1) for k, v in edges.items()}
    return figures


# ----------------------------------------------------------------------------------- common
def alternate(epochs: int, dgl_peer, gf_peer, warmup: int) -> dict[str, float]:
    """Whole epochs, ``warmup`` untimed first, then ``epochs`` timed of each, the order of the
    peers reversed every epoch; median seconds each, with their spreads."""
    (ref, dgl_epoch), (ours, gf_epoch) = dgl_peer, gf_peer
    opts = {"dgl": torch.optim.Adam(ref.parameters(), lr=0.01),
            "graphflow": torch.optim.Adam(ours.parameters(), lr=0.01)}
    raced = records.race({"dgl": lambda rep: dgl_epoch(opts["dgl"]),
                          "graphflow": lambda rep: gf_epoch(opts["graphflow"])},
                         epochs, warmup=warmup)
    dgl_s, gf_s = raced.median("dgl"), raced.median("graphflow")
    for name in ("dgl", "graphflow"):
        print(f"  {raced.summary(name, scale=1e3, unit='ms', digits=1)}", flush=True)
    return {"dgl_epoch_s": round(dgl_s, 4), "graphflow_epoch_s": round(gf_s, 4),
            "ratio": round(dgl_s / gf_s, 3), "ratio_spread": raced.ratio("dgl", "graphflow"),
            **raced.record()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=0, help="CPU threads for torch and DGL")
    p.add_argument("--epochs", type=int, default=5, help="timed epochs per peer and case")
    p.add_argument("--edges", type=int, default=1_200_000, help="edges of the generated graph")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-full", action="store_true", help="only the sampled case")
    p.add_argument("--scale", type=float, default=1.0,
                   help="the generated graph's node counts times S (default 1; a smoke run)")
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/hetero/ (benchmarks/records.py)")
    args = p.parse_args(argv)
    load_before = load_average()
    machine.set_threads(args.threads)
    info = machine.show()
    torch.manual_seed(args.seed)
    figures: dict[str, object] = {"threads": torch.get_num_threads(), "fanouts": FANOUTS,
                                  "batch": args.batch}
    if not args.skip_full:
        full = bench_full(load_aifb(), max(args.epochs * 4, 10))
        print(f"AIFB full graph, medians: DGL {full['dgl_epoch_s'] * 1e3:.1f} ms/epoch, "
              f"graphflow {full['graphflow_epoch_s'] * 1e3:.1f} ms/epoch, ratio {full['ratio']}",
              flush=True)
        figures["full_aifb"] = full
    data = generate(args.edges, args.seed, scale=args.scale)
    g = data.graph
    print(f"generated: {g.num_nodes():,} nodes of {len(g.ntypes)} types, {g.num_edges():,} "
          f"edges of {len(g.canonical_etypes)} relations", flush=True)
    sampled = bench_sampled(data, args.epochs, args.batch, args.seed)
    r = sampled["ratio_spread"]
    print(f"sampled epoch ({g.num_nodes('paper') // 4:,} seeds), medians of {args.epochs}: DGL "
          f"{sampled['dgl_epoch_s']:.2f} s, graphflow {sampled['graphflow_epoch_s']:.2f} s, "
          f"ratio {sampled['ratio']} (epoch pairs {r['min']:.2f}-{r['max']:.2f})", flush=True)
    figures["sampled"] = sampled
    figures["ratio"] = sampled["ratio"]
    figures["machine"] = info
    if args.record:
        write("hetero", figures, load_before=load_before)
    print(json.dumps(figures, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
