"""Graph classification: graphflow's batching and GIN against DGL's recipe, in one process.

Both sides train the same GIN (Xu et al. 2019: 4 GIN layers plus the input, i.e. "5 layers",
hidden 64, MLPs of 2 linear maps, batch norm and ReLU after each hidden layer, sum readout of
every layer's output, each scored by its own linear map, dropout 0.5 before them), with Adam
(lr 0.01, halved every 50 epochs; torch's fused kernel on both sides, as ``graphflow run``
builds it), on the same batches of shuffled graphs (``--batch``, default 32; MUTAG always
trains on 32), with the same torch thread count:

* graphflow: the collection as one CSR, batches cut by index arithmetic
  (:class:`graphflow.graphs.batch.GraphBatcher`), the ``gin`` model plugin's stack,
  :class:`graphflow.graphs.model.GraphModel` (segment-sum readout);
* DGL: a list of DGLGraphs, ``GraphDataLoader`` (``dgl.batch`` per batch), ``dgl.nn.GINConv``
  and ``SumPooling``: the recipe of DGL's ``examples/pytorch/gin``.

Timing: whole training epochs on a generated collection (default 100,000 graphs of 10 to 100
nodes, each node with 2 random undirected edges to nodes of its graph, 16 random features, 2
classes), after ``--warmup`` untimed epochs per side, the order of the sides reversed every
epoch (graphflow first, then DGL first, ...: :mod:`benchmarks.records`); each side's median
over all its timed epochs is reported with its least and largest (``epoch_s``,
``epoch_s_spread``; ``ratio`` is the medians' ratio). Before them, one epoch's batches alone
(no training), the median of four alternating rounds: graphflow's cut, the same cut by torch
calls (the path graphflow takes off the CPU), and DGL's ``GraphDataLoader``; ``batching_ms``
and ``batching_ratio`` in the JSON.

Quality (``quality`` in the JSON; ``--skip-speed`` runs it alone): 10-fold GIN-protocol
accuracy (``cv_gin_acc``: the best epoch of the fold-mean test curve) with every side on the
same folds (graphflow.graphs.folds, from each seed), batches of 32, 100 epochs, Adam lr 0.01
halved every 50, on MUTAG and on a generated TU collection of 600 graphs in 6 classes that
differ in their motifs (``examples/data/make_motifs.py``, written to a temporary folder and
read by graphflow's ``tu`` loader). The sides (``--sides``):

* ``dgl``: DGL's GIN example (``examples/pytorch/gin/train.py``) as written there: 4
  ``GINConv`` layers (eps 0 fixed) of ``Linear -> BatchNorm -> ReLU -> Linear`` MLPs without
  biases, batch norm and ReLU after every layer, ``SumPooling`` of every layer's output and
  the input's, each scored by its own ``nn.Linear``, dropout 0.5 on each layer's scores, the
  scores summed (on the same graphs: no self-loops added, see docs/graph_classification.md);
* ``graphflow``: what ``[model] type = "gin"``, ``norm = "batch"`` and a graph task build by
  default (the same network: ``tests/graphs/test_gin_parity.py``);
* ``graphflow-features``: the same with ``readout_dropout = "features"`` (dropout on the
  read-out vectors before the linear maps);
* ``graphflow-before``: graphflow's recipe before it followed DGL's: dropout on the
  read-out vectors, no batch norm inside the MLPs, the last layer's output raw;
* ``graphflow-plain-mlp``, ``graphflow-raw-last``, ``graphflow-no-mlp-bias``: the recipe
  without the MLPs' batch norm, with the last layer's output raw, or without the biases of
  the MLPs' linear maps (each followed by a batch norm; DGL's example has none) (one
  difference each);
* ``dgl-before``: the DGL network of the timed part (no batch norm inside the MLPs, the
  last layer raw, dropout before the linear maps): the same as ``graphflow-before``.

    flock /tmp/graphflow-bench.lock python benchmarks/graph_classification.py
    python benchmarks/graph_classification.py --graphs 20000 --epochs 1 --mutag-epochs 50
    python benchmarks/graph_classification.py --graphs 20000 --min-nodes 2 --max-nodes 5 \
        --skip-quality   # small graphs: each batch's fixed cost
    python benchmarks/graph_classification.py --edge-features 4   # GINE on both sides
    python benchmarks/graph_classification.py --batch 128  # DGL's GIN example's batch size
    OMP_NUM_THREADS=1 python benchmarks/graph_classification.py --skip-speed --threads 1 \
        --sets motifs --seeds 0,1,2 --sides graphflow,graphflow-features,dgl

With ``--edge-features D`` every generated edge gets a random one-hot type of D (both
directions the same) and both sides train GINE instead (Hu et al. 2020: the same network with
``ReLU(h_j + W_l e_ji + b_l)`` messages, one linear map per layer from the edge features):
graphflow's ``gine`` model plugin against ``dgl.nn.GINEConv`` with the same per-layer maps.
MUTAG has no edge features, so the quality part is skipped then.

After the epochs, the dense products of 16 of graphflow's batches (``--product-batches``)
are recorded and run again alone (:mod:`benchmarks.products`): ``parts`` in the JSON gives
both sides' batch times (from the median epochs), the products alone, the ``ceiling`` (DGL's
batch over the products alone: what a step running the same products could reach were all
else free) and what 2x DGL's batch would leave the rest of graphflow's step.

The last line is JSON: ``ratio`` = DGL epoch time / graphflow epoch time on the generated
collection (medians), ``ratio_spread`` its range over epoch pairs, and the quality figures
(per set, per seed, per side, and each side's mean over the seeds).
``--record`` also saves it under ``benchmarks/results/graph_classification/`` (with
``--skip-speed``, the quality part alone, under ``graph_classification_quality/``:
``benchmarks/figures.py`` renders each into its own table).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import graphflow  # noqa: F401,E402  (OpenMP defaults before torch work)
from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.graphs.batch import GraphBatcher  # noqa: E402
from graphflow.runtime import allocator  # noqa: E402
from graphflow.graphs.folds import fold_parts, stratified_folds  # noqa: E402
from graphflow.graphs.model import DropoutOn, GraphModel  # noqa: E402
from graphflow.sparse import Adjacency  # noqa: E402
from graphflow.train.optim import make_optimizer  # noqa: E402
from graphflow_plugins.models.gin import GINModel, GINOptions  # noqa: E402
from graphflow_plugins.models.gine import GINEModel, GINEOptions  # noqa: E402

from benchmarks import machine  # noqa: E402
from benchmarks.records import alternate, orders, ratio_spread, spread, write  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.products import RecordProducts, replay  # noqa: E402

HIDDEN, LAYERS, LR = 64, 4, 0.01
BATCH = 32
"""Graphs per training batch in the timed epochs (``--batch``; DGL's GIN example trains on
128)."""
QUALITY_BATCH = 32
"""Graphs per batch on MUTAG, whatever ``--batch`` says (``examples/mutag_gin.toml``'s)."""
GOAL = 2.0
"""The ratio (DGL's epoch / graphflow's) that the ``parts`` line sets the budget against."""


# --------------------------------------------------------------------------- data
def generate(num_graphs: int, seed: int, min_nodes: int = 10, max_nodes: int = 100,
             edge_types: int = 0) -> tuple[dgl.DGLGraph, torch.Tensor, torch.Tensor]:
    """(block-diagonal graph with feat, graph_ptr, labels): sizes ``min_nodes..max_nodes``
    (uniform), 2 random undirected edges per node inside its graph; the label is whether the
    graph has more than the middle size's nodes (55 by default: a size question the readout
    must answer). With ``edge_types``, ``edata["edge_feat"]`` is a random one-hot type per
    undirected edge (the same both ways)."""
    gen = torch.Generator().manual_seed(seed)
    sizes = torch.randint(min_nodes, max_nodes + 1, (num_graphs,), generator=gen)
    ptr = torch.zeros(num_graphs + 1, dtype=torch.int64)
    torch.cumsum(sizes, 0, out=ptr[1:])
    n = int(ptr[-1])
    graph = torch.repeat_interleave(torch.arange(num_graphs), sizes)  # (n,)
    m = 2 * n
    owner = graph.repeat(2)  # (m,) the graph of each edge
    a = ptr[owner] + (torch.rand(m, generator=gen) * sizes[owner]).long()
    b = ptr[owner] + (torch.rand(m, generator=gen) * sizes[owner]).long()
    g = dgl.graph((torch.cat([a, b]), torch.cat([b, a])), num_nodes=n)
    g.ndata["feat"] = torch.randn(n, 16, generator=gen)
    if edge_types:
        kind = torch.randint(edge_types, (m,), generator=gen).repeat(2)  # (2m,) both ways
        g.edata["edge_feat"] = F.one_hot(kind, edge_types).float()
    return g, ptr, (sizes > (min_nodes + max_nodes) // 2).long()


def mutag(path: Path) -> tuple[dgl.DGLGraph, torch.Tensor, torch.Tensor]:
    from graphflow_plugins.loaders.graph_collection import (KernelCollectionLoader,
                                                            KernelCollectionOptions)

    data = KernelCollectionLoader(KernelCollectionOptions(path=path, features="labels")) \
        .load(None)
    return data.graph, data.graphs.graph_ptr, data.graphs.labels


def motifs(seed: int = 0) -> tuple[dgl.DGLGraph, torch.Tensor, torch.Tensor]:
    """The generated 6-class motif collection (``examples/data/make_motifs.py``, its own seed
    0 whatever the run's), written as TU files to a temporary folder and read back by
    graphflow's ``tu`` loader, node labels one-hot as features."""
    import tempfile

    from graphflow_plugins.loaders.tu import TULoader, TUOptions

    sys.path.insert(0, str(REPO / "examples" / "data"))
    try:
        import make_motifs
    finally:
        sys.path.pop(0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_motifs.write_tu(Path(tmp), make_motifs.collection(600, seed))
        data = TULoader(TUOptions(path=folder, name=make_motifs.NAME, features="labels")) \
            .load(None)
    return data.graph, data.graphs.graph_ptr, data.graphs.labels


def split_graphs(g: dgl.DGLGraph, ptr: torch.Tensor) -> list[dgl.DGLGraph]:
    """The collection as DGL's recipe holds it: one DGLGraph per graph, built untimed, with
    its sparse formats (COO, CSR, CSC) built too (``create_formats_``), as graphflow's CSR
    and its transpose are before any timer starts (``dgl.batch`` then joins the graphs'
    CSC instead of building one per batch: DGL's epoch is about 13% shorter)."""
    src, dst = g.edges()
    owner = torch.searchsorted(ptr, src, right=True) - 1
    g.set_batch_num_nodes(ptr[1:] - ptr[:-1])
    g.set_batch_num_edges(torch.bincount(owner, minlength=ptr.shape[0] - 1))
    order = torch.argsort(owner, stable=True)
    sub = dgl.graph((src[order], dst[order]), num_nodes=g.num_nodes())
    sub.ndata["feat"] = g.ndata["feat"]
    if "edge_feat" in g.edata:
        sub.edata["edge_feat"] = g.edata["edge_feat"][order]
    sub.set_batch_num_nodes(ptr[1:] - ptr[:-1])
    sub.set_batch_num_edges(torch.bincount(owner, minlength=ptr.shape[0] - 1))
    graphs = dgl.unbatch(sub)
    for one in graphs:  # not a hot path: set-up, before timing
        one.create_formats_()
    return graphs


# --------------------------------------------------------------------------- models
def graphflow_model(in_dim: int, classes: int, probe, edges: bool = False) -> GraphModel:
    """graphflow's ``gin`` (or, with ``edges``, ``gine``) plugin's stack in a GraphModel."""
    kind, options = (GINEModel, GINEOptions) if edges else (GINModel, GINOptions)
    encoder = kind(options(layers=LAYERS, hidden=HIDDEN, norm="batch", dropout=0.0)) \
        .build(in_dim, HIDDEN)
    return GraphModel.probe(encoder, probe, "all", classes, pooling="sum", dropout=0.5)


RECIPES: dict[str, dict] = {
    "graphflow": {},
    "graphflow-features": {"dropout_on": "features"},
    "graphflow-before": {"dropout_on": "features", "mlp_norm": "none", "norm_last": False},
    "graphflow-plain-mlp": {"mlp_norm": "none"},
    "graphflow-raw-last": {"norm_last": False},
    "graphflow-no-mlp-bias": {"mlp_bias": False},
}
"""graphflow's sides in the quality part: changes to the recipe (``recipe_model``)."""


def recipe_model(in_dim: int, classes: int, probe, dropout_on: DropoutOn = "scores",
                 mlp_norm: str = "auto", norm_last: bool = True,
                 mlp_bias: bool = True) -> GraphModel:
    """graphflow's ``gin`` as a graph task builds it by default (``norm = "batch"``, no
    dropout in the stack): the GIN recipe of DGL's example, or one of its variants. Without
    ``mlp_bias`` the MLPs' linear maps lose their biases after they are drawn (every other
    initial value the same), as DGL's example's MLPs have none."""
    encoder = GINModel(GINOptions(layers=LAYERS, hidden=HIDDEN, norm="batch", dropout=0.0,
                                  mlp_norm=mlp_norm, norm_last=norm_last)).build(in_dim, HIDDEN)
    if not mlp_bias:
        for layer in encoder.modules():
            if isinstance(layer, nn.Linear):  # the encoder's only maps: the MLPs'
                layer.register_parameter("bias", None)
    return GraphModel.probe(encoder, probe, "all", classes, pooling="sum", dropout=0.5,
                            dropout_on=dropout_on)


class ExampleMLP(nn.Module):
    """DGL's GIN example's MLP: ``Linear -> BatchNorm -> ReLU -> Linear``, no biases."""

    def __init__(self, input_dim: int, hidden_dim: int, output_dim: int):
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(input_dim, hidden_dim, bias=False),
                                      nn.Linear(hidden_dim, output_dim, bias=False)])
        self.batch_norm = nn.BatchNorm1d(hidden_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linears[1](F.relu(self.batch_norm(self.linears[0](x))))


class DGLExampleGIN(nn.Module):
    """DGL's GIN example's model (``examples/pytorch/gin/train.py``, ``GIN``) with its
    widths as parameters: ``LAYERS`` GINConv layers (eps 0, fixed), batch norm and ReLU after
    each, every layer's output and the input sum-pooled and scored by its own linear map,
    dropout on each layer's scores, the scores summed."""

    def __init__(self, in_dim: int, classes: int):
        super().__init__()
        GINConv, SumPooling = dgl.nn.GINConv, dgl.nn.SumPooling
        self.ginlayers = nn.ModuleList(
            GINConv(ExampleMLP(in_dim if i == 0 else HIDDEN, HIDDEN, HIDDEN), learn_eps=False)
            for i in range(LAYERS))
        self.batch_norms = nn.ModuleList(nn.BatchNorm1d(HIDDEN) for _ in range(LAYERS))
        self.linear_prediction = nn.ModuleList(
            nn.Linear(in_dim if i == 0 else HIDDEN, classes) for i in range(LAYERS + 1))
        self.drop = nn.Dropout(0.5)
        self.pool = SumPooling()

    def forward(self, g: dgl.DGLGraph, h: torch.Tensor) -> torch.Tensor:
        hidden_rep = [h]
        for i, layer in enumerate(self.ginlayers):
            h = F.relu(self.batch_norms[i](layer(g, h)))
            hidden_rep.append(h)
        score = 0
        for i, h in enumerate(hidden_rep):
            score = score + self.drop(self.linear_prediction[i](self.pool(g, h)))
        return score


class DGLGIN(nn.Module):
    """The same network with DGL's layers: GINConv (sum, eps 0) + SumPooling; with
    ``edge_dim``, GINEConv with a linear map per layer from the edge features to the layer's
    input width (as graphflow's ``gine``)."""

    def __init__(self, in_dim: int, classes: int, edge_dim: int = 0):
        super().__init__()
        GINConv, GINEConv, SumPooling = dgl.nn.GINConv, dgl.nn.GINEConv, dgl.nn.SumPooling

        dims = [in_dim] + [HIDDEN] * LAYERS

        def mlp(i: int) -> nn.Module:
            return nn.Sequential(nn.Linear(dims[i], dims[i + 1]), nn.ReLU(),
                                 nn.Linear(dims[i + 1], dims[i + 1]))

        self.convs = nn.ModuleList(GINEConv(mlp(i)) if edge_dim else GINConv(mlp(i), "sum")
                                   for i in range(LAYERS))
        self.edges = nn.ModuleList(nn.Linear(edge_dim, dims[i])
                                   for i in range(LAYERS if edge_dim else 0))
        self.norms = nn.ModuleList(nn.BatchNorm1d(HIDDEN) for _ in range(LAYERS - 1))
        self.heads = nn.ModuleList(nn.Linear(d, classes) for d in dims)
        self.pool = SumPooling()
        self.drop = nn.Dropout(0.5)

    def forward(self, g: dgl.DGLGraph, h: torch.Tensor) -> torch.Tensor:
        outs = [h]
        for i, conv in enumerate(self.convs):
            h = conv(g, h, self.edges[i](g.edata["edge_feat"])) if self.edges else conv(g, h)
            if i < LAYERS - 1:
                h = F.relu(self.norms[i](h))
            outs.append(h)
        return sum(head(self.drop(self.pool(g, x))) for head, x in zip(self.heads, outs))


# --------------------------------------------------------------------------- sides
class GraphflowSide:
    name = "graphflow"

    def __init__(self, g, ptr, labels, classes, seed, workers: int = 0, batch: int = BATCH,
                 recipe: dict | None = None, name: str = "graphflow"):
        edges = "edge_feat" in g.edata
        self.name = name
        self.batch_size = batch
        adj = Adjacency.from_graph(g, feat="edge_feat" if edges else None)
        self.batcher = GraphBatcher(adj, ptr, g.ndata["feat"])
        self.workers = workers  # background threads cutting the batches (0: inline)
        self.labels = labels
        torch.manual_seed(seed)
        probe = self.batcher.batch(torch.tensor([0]))
        self.model = graphflow_model(g.ndata["feat"].shape[1], classes, probe, edges) \
            if recipe is None else recipe_model(g.ndata["feat"].shape[1], classes, probe,
                                                **recipe)
        self.opt = make_optimizer("adam", self.model, lr=LR, weight_decay=0.0)
        self.gen = torch.Generator().manual_seed(seed)

    def epoch(self, train: torch.Tensor) -> float:
        self.model.train()
        total = 0.0
        for batch in self.batcher.epoch(train, self.batch_size, generator=self.gen,
                                        workers=self.workers):
            score, _ = self.model(batch)
            loss = F.cross_entropy(score, self.labels[batch.graphs])
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            total += loss.item()
        return total

    @torch.no_grad()
    def accuracy(self, ids: torch.Tensor) -> float:
        self.model.eval()
        correct = 0
        for batch in self.batcher.epoch(ids, 1024):
            correct += int((self.model(batch)[0].argmax(1) == self.labels[batch.graphs]).sum())
        return correct / ids.numel()


class DGLSide:
    name = "dgl"

    def __init__(self, graphs, labels, classes, seed, batch: int = BATCH,
                 example: bool = False, name: str = "dgl"):
        self.graphs, self.labels = graphs, labels
        self.batch_size = batch
        self.name = name
        torch.manual_seed(seed)
        edge = graphs[0].edata.get("edge_feat")
        in_dim = graphs[0].ndata["feat"].shape[1]
        self.model = DGLExampleGIN(in_dim, classes) if example else \
            DGLGIN(in_dim, classes, 0 if edge is None else int(edge.shape[1]))
        self.opt = make_optimizer("adam", self.model, lr=LR, weight_decay=0.0)  # the same Adam
        self.seed = seed

    def loader(self, ids: torch.Tensor, shuffle: bool, batch: int | None = None):
        GraphDataLoader = dgl.dataloading.GraphDataLoader

        dataset = [(self.graphs[i], self.labels[i]) for i in ids.tolist()]
        return GraphDataLoader(dataset, batch_size=batch or self.batch_size, shuffle=shuffle)

    def epoch(self, train: torch.Tensor) -> float:
        self.model.train()
        total = 0.0
        for g, y in self._train_loader(train):
            loss = F.cross_entropy(self.model(g, g.ndata["feat"]), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            total += loss.item()
        return total

    def _train_loader(self, train):
        key = id(train)
        if getattr(self, "_key", None) != key:  # the dataset list is built once per split
            self._key, self._loader = key, self.loader(train, True)
        return self._loader

    @torch.no_grad()
    def accuracy(self, ids: torch.Tensor) -> float:
        self.model.eval()
        correct = 0
        for g, y in self.loader(ids, False, 1024):
            correct += int((self.model(g, g.ndata["feat"]).argmax(1) == y).sum())
        return correct / ids.numel()


LR_STEP = 50
"""Epochs between the halvings of the learning rate (``--lr-step``; DGL's GIN example: 50)."""


def set_lr(side, epoch: int, step: int = LR_STEP) -> None:
    for group in side.opt.param_groups:
        group["lr"] = LR * 0.5 ** ((epoch - 1) // step)


# --------------------------------------------------------------------------- runs
def speed(num_graphs: int, epochs: int, seed: int, workers: int = 0,
          sizes: tuple[int, int] = (10, 100), product_batches: int = 16,
          edge_types: int = 0, batch: int = BATCH, warmup: int = 1) -> dict:
    t = time.perf_counter()
    g, ptr, labels = generate(num_graphs, seed, *sizes, edge_types=edge_types)
    graphs = split_graphs(g, ptr)
    print(f"generated {num_graphs:,} graphs, {g.num_nodes():,} nodes, {g.num_edges():,} "
          f"edges in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    train = torch.arange(num_graphs)
    sides = [GraphflowSide(g, ptr, labels, 2, seed, workers, batch),
             DGLSide(graphs, labels, 2, seed, batch)]
    cutting = batching(sides[0], sides[1], train, seed)
    by_name = {side.name: side for side in sides}
    for name in (n for order in orders(list(by_name), warmup) for n in order):
        t = time.perf_counter()  # warm-up epochs: first-call costs, not timed
        by_name[name].epoch(train)
        print(f"warm-up epoch {name}: {time.perf_counter() - t:.2f} s", file=sys.stderr)
    times = alternate({name: (lambda rep, side=side: side.epoch(train))
                       for name, side in by_name.items()}, epochs,
                      on_time=lambda name, rep, s: print(f"epoch {rep + 1} {name}: {s:.2f} s",
                                                         file=sys.stderr))
    med = {k: spread(v)["median"] for k, v in times.items()}
    out = {"graphs": num_graphs, "graph_nodes": list(sizes), "nodes": g.num_nodes(),
           "model": "gin" if not edge_types else "gine", "edge_features": edge_types,
           "edges": g.num_edges(), "batching_ms": cutting,
           "batching_ratio": cutting["dgl"] / cutting["graphflow"], "warmup_epochs": warmup,
           "orders": orders(list(by_name), epochs),
           "epoch_s": med, "epoch_s_spread": {k: spread(v) for k, v in times.items()},
           "epoch_s_all": times, "ratio": med["dgl"] / med["graphflow"],
           "ratio_spread": ratio_spread(times["dgl"], times["graphflow"])}
    if product_batches > 0:
        batches = -(-train.shape[0] // batch)  # an epoch's batches
        out["parts"] = parts(sides[0], train, product_batches,
                             {k: v / batches * 1e3 for k, v in med.items()})
    return out


def parts(ours: GraphflowSide, train: torch.Tensor, count: int,
          batch_ms: dict[str, float]) -> dict[str, float]:
    """The dense products of ``count`` of graphflow's batches (forward and backward, no
    optimizer step), recorded and run alone (:mod:`benchmarks.products`), against both sides'
    batch times (``batch_ms``, ms, from the median epochs): ``products_ms`` a batch, the
    ``ceiling`` (DGL's batch / the products alone: what a step running the same products could
    reach were all else free) and what :data:`GOAL` x DGL's batch leaves the rest of
    graphflow's step (``rest_budget_ms``, against ``rest_ms`` now)."""
    recorder = RecordProducts()
    batcher, model = ours.batcher, ours.model
    order = train[torch.randperm(train.shape[0], generator=torch.Generator().manual_seed(1))]
    sels = order[:count * ours.batch_size].split(ours.batch_size)
    for sel in sels:
        batch = batcher.batch(sel)
        with recorder:
            score, _ = model(batch)
            F.cross_entropy(score, ours.labels[batch.graphs]).backward()
        model.zero_grad(set_to_none=True)
    done = len(sels)
    alone = replay(recorder.calls) / done * 1e3
    ours_ms, theirs_ms = batch_ms["graphflow"], batch_ms["dgl"]
    out = {"graphflow_batch_ms": ours_ms, "dgl_batch_ms": theirs_ms, "products_ms": alone,
           "product_calls": len(recorder.calls) // done, "ceiling": theirs_ms / alone,
           "rest_ms": ours_ms - alone, "rest_budget_ms": theirs_ms / GOAL - alone}
    print(f"batch: graphflow {ours_ms:.2f} ms, DGL {theirs_ms:.2f} ms; graphflow's dense "
          f"products alone {alone:.2f} ms ({out['product_calls']} calls, {done} batches "
          f"replayed), the rest {out['rest_ms']:.2f} ms; ceiling (DGL's batch / the products "
          f"alone) {out['ceiling']:.2f}x; {GOAL:g}x DGL leaves the rest "
          f"{out['rest_budget_ms']:.2f} ms", file=sys.stderr)
    return out


def batching(ours: GraphflowSide, theirs: DGLSide, train: torch.Tensor, seed: int,
             rounds: int = 4) -> dict[str, float]:
    """ms per batch of one epoch's batches alone (no training), the median of ``rounds``
    in alternating order (:func:`benchmarks.records.orders`): graphflow's cut (compiled on
    the CPU), the same cut by torch calls (the path other devices run), and DGL's
    ``GraphDataLoader`` (``dgl.batch`` of the graphs)."""
    batcher = ours.batcher
    native = batcher.compiled  # what this machine runs (the compiled cut on the CPU)

    def cut(name: str) -> Callable[[int], None]:
        def run(rep: int) -> None:
            gen = torch.Generator().manual_seed(seed)
            if name == "dgl":
                counts[name] = sum(1 for _ in theirs._train_loader(train))
            else:
                batcher.compiled = native and name == "graphflow"
                counts[name] = sum(1 for _ in batcher.epoch(train, ours.batch_size,
                                                            generator=gen))
        return run

    counts: dict[str, int] = {}
    names = ["graphflow", "graphflow_torch_calls", "dgl"]
    runs = alternate({name: cut(name) for name in names}, rounds)
    batcher.compiled = native
    med = {k: spread(v)["median"] * 1e3 / counts[k] for k, v in runs.items()}
    print(f"batching alone, ms a batch (median of {rounds}, alternating): "
          + ", ".join(f"{k} {v:.3f}" for k, v in med.items())
          + f"; DGL / graphflow {med['dgl'] / med['graphflow']:.1f}x", file=sys.stderr)
    return med


SIDES = ("graphflow", "graphflow-features", "dgl")
"""The quality part's default sides (``--sides``; the others: ``graphflow-before``,
``graphflow-plain-mlp``, ``graphflow-raw-last``, ``graphflow-no-mlp-bias``, ``dgl-before``)."""
KNOWN_SIDES = (*RECIPES, "dgl", "dgl-before")


def make_side(name: str, g, graphs, ptr, labels, classes: int, seed: int):
    """One quality side, its model drawn from ``seed`` (``QUALITY_BATCH`` graphs a batch)."""
    if name in RECIPES:
        return GraphflowSide(g, ptr, labels, classes, seed, batch=QUALITY_BATCH,
                             recipe=RECIPES[name], name=name)
    return DGLSide(graphs, labels, classes, seed, QUALITY_BATCH, example=name == "dgl",
                   name=name)


def quality(g, ptr, labels, epochs: int, seed: int, sides=SIDES, what: str = "",
            lr_step: int = LR_STEP) -> dict:
    """``cv_gin_acc`` of every side on the same 10 stratified folds of ``seed`` (each fold's
    models drawn from ``seed + fold``): the best epoch of the fold-mean test curve, its std
    over folds, and the mean accuracy at the last epoch."""
    graphs = split_graphs(g, ptr)
    n = labels.shape[0]
    classes = int(labels.max()) + 1
    curves: dict[str, list[list[float]]] = {name: [] for name in sides}
    for f, test in enumerate(stratified_folds(labels, n, 10, seed=seed)):
        fold = fold_parts(test, n, labels, val_fraction=0.0, seed=seed + f)
        for name in sides:
            side = make_side(name, g, graphs, ptr, labels, classes, seed + f)
            curve = []
            for epoch in range(1, epochs + 1):
                set_lr(side, epoch, lr_step)
                side.epoch(fold.train)
                curve.append(side.accuracy(fold.test))
            curves[name].append(curve)
        print(f"{what} seed {seed} fold {f}: " + ", ".join(
            f"{k} {v[-1][-1]:.3f}" for k, v in curves.items()) + " (last epoch)",
            file=sys.stderr)
    out = {}
    for name, c in curves.items():
        t = torch.tensor(c)  # (folds, epochs)
        mean = t.mean(0)
        best = int(mean.argmax())
        out[name] = {"gin_acc": float(mean[best]), "std": float(t[:, best].std(unbiased=False)),
                     "epoch": best + 1, "last_epoch_acc": float(t[:, -1].mean())}
    return out


def quality_sets(names: list[str], mutag_path: Path, epochs: int, seeds: list[int],
                 sides, lr_step: int = LR_STEP) -> dict:
    """:func:`quality` on every set and seed; per set, each side's figures by seed and their
    mean and range over the seeds."""
    loaders = {"mutag": lambda: mutag(mutag_path), "motifs": motifs}
    out: dict[str, dict] = {}
    for name in names:
        if name == "mutag" and not mutag_path.exists():
            print(f"MUTAG not found at {mutag_path}: skipped", file=sys.stderr)
            continue
        g, ptr, labels = loaders[name]()
        runs = {seed: quality(g, ptr, labels, epochs, seed, sides, name, lr_step)
                for seed in seeds}
        summary = {}
        for side in sides:
            accs = [runs[seed][side]["gin_acc"] for seed in seeds]
            summary[side] = {"mean": sum(accs) / len(accs), "min": min(accs),
                             "max": max(accs)}
            print(f"{name} {side}: cv_gin_acc " + ", ".join(f"{a:.3f}" for a in accs)
                  + f" (seeds {', '.join(map(str, seeds))}; mean {summary[side]['mean']:.3f})",
                  file=sys.stderr)
        out[name] = {"graphs": int(labels.shape[0]), "epochs": epochs, "lr_step": lr_step,
                     "seeds": {str(k): v for k, v in runs.items()}, "mean": summary}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graphs", type=int, default=100_000)
    p.add_argument("--min-nodes", type=int, default=10,
                   help="smallest generated graph (default 10)")
    p.add_argument("--max-nodes", type=int, default=100,
                   help="largest generated graph (default 100); small graphs show the fixed "
                        "cost of a batch (Python, dispatch, autograd), large ones its products")
    p.add_argument("--epochs", type=int, default=4,
                   help="timed epochs per side, alternating which side goes first (default 4)")
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed epochs per side before them, also alternating (default 1)")
    p.add_argument("--record", action="store_true",
                   help="save the result with its machine, commit and command under "
                        "benchmarks/results/graph_classification/ (with --skip-speed: "
                        "graph_classification_quality/; benchmarks/records.py)")
    p.add_argument("--batch", type=int, default=BATCH,
                   help=f"graphs per batch in the timed epochs, both sides (default {BATCH}; "
                        f"DGL's GIN example uses 128; MUTAG trains on {QUALITY_BATCH})")
    p.add_argument("--mutag", type=Path,
                   default=Path(__file__).resolve().parents[2] / "shared/data/mutag/MUTAG.mat")
    p.add_argument("--quality-epochs", "--mutag-epochs", dest="quality_epochs", type=int,
                   default=100, help="epochs per fold in the quality part (default 100)")
    p.add_argument("--lr-step", type=int, default=LR_STEP,
                   help=f"quality part: halve the learning rate every this many epochs "
                        f"(default {LR_STEP}, DGL's GIN example's)")
    p.add_argument("--sets", default="mutag,motifs",
                   help="quality sets, comma-separated: mutag, motifs (default both)")
    p.add_argument("--seeds", default=None,
                   help="quality seeds, comma-separated (default: --seed)")
    p.add_argument("--sides", default=",".join(SIDES),
                   help=f"quality sides, comma-separated, of {', '.join(KNOWN_SIDES)} "
                        f"(default {','.join(SIDES)})")
    p.add_argument("--skip-speed", action="store_true",
                   help="the quality part alone (no timed epochs)")
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument("--product-batches", type=int, default=16,
                   help="graphflow batches whose dense products are recorded and run alone "
                        "after the epochs, for the ceiling line (default 16; 0: none)")
    p.add_argument("--edge-features", type=int, default=0, metavar="D",
                   help="give every generated edge a random one-hot type of D and train GINE "
                        "on both sides (graphflow's gine, DGL's GINEConv); default 0: GIN")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-quality", action="store_true")
    p.add_argument("--workers", type=int, default=0,
                   help="graphflow's batches cut by this many background threads (default 0: "
                        "inline, as graphflow run's core policy does below 4 cores)")
    p.add_argument("--allocator", choices=["retain", "system"], default="retain",
                   help="malloc for the whole process, both sides (retain: what graphflow run "
                        "sets, graphflow.runtime.allocator)")
    a = p.parse_args()
    if a.workers < 0:
        p.error(f"--workers must be at least 0, got {a.workers}")
    if a.batch < 1:
        p.error(f"--batch must be at least 1, got {a.batch}")
    if a.epochs < 1 or a.warmup < 0:
        p.error(f"need --epochs >= 1 and --warmup >= 0, got {a.epochs} and {a.warmup}")
    if a.product_batches < 0:
        p.error(f"--product-batches must be at least 0, got {a.product_batches}")
    if a.edge_features < 0:
        p.error(f"--edge-features must be at least 0, got {a.edge_features}")
    sets = [x for x in a.sets.split(",") if x]
    sides = [x for x in a.sides.split(",") if x]
    for x in sets:
        if x not in ("mutag", "motifs"):
            p.error(f'--sets: unknown set "{x}"; choices: mutag, motifs')
    for x in sides:
        if x not in KNOWN_SIDES:
            p.error(f'--sides: unknown side "{x}"; choices: {", ".join(KNOWN_SIDES)}')
    try:
        seeds = [a.seed] if a.seeds is None else [int(x) for x in a.seeds.split(",") if x]
    except ValueError:
        p.error(f"--seeds takes integers separated by commas, got {a.seeds!r}")
    if a.lr_step < 1:
        p.error(f"--lr-step must be at least 1, got {a.lr_step}")
    if a.skip_speed and a.skip_quality:
        p.error("--skip-speed and --skip-quality leave nothing to run; drop one")
    if not 1 <= a.min_nodes <= a.max_nodes:
        p.error(f"need 1 <= --min-nodes <= --max-nodes, got {a.min_nodes} and {a.max_nodes}")
    load_before = load_average()
    malloc = allocator.apply(a.allocator)["allocator"]
    print(f"malloc: {malloc}, for the whole process (both sides)", file=sys.stderr)
    machine.set_threads(a.threads)  # torch's and DGL's own, the same for both sides
    result = {"machine": machine.show(), "threads": a.threads, "allocator": malloc,
              "torch": torch.__version__, "dgl": dgl.__version__, "batch_size": a.batch,
              "hidden": HIDDEN, "gin_layers": LAYERS}
    result["workers"] = a.workers
    if not a.skip_speed:
        result.update(speed(a.graphs, a.epochs, a.seed, a.workers, (a.min_nodes, a.max_nodes),
                            a.product_batches, a.edge_features, a.batch, a.warmup))
    if a.edge_features and not a.skip_quality:
        print("the quality sets have no edge features: the quality part is skipped with "
              "--edge-features", file=sys.stderr)
    elif not a.skip_quality:
        result["quality"] = quality_sets(sets, a.mutag, a.quality_epochs, seeds, sides,
                                         a.lr_step)
    if "ratio" in result:
        r = result["ratio_spread"]
        print(f"ratio (DGL / graphflow, medians of {r['n']} alternating epochs each): "
              f"{result['ratio']:.2f} (epoch pairs {r['min']:.2f}-{r['max']:.2f})",
              file=sys.stderr)
    if a.record:  # quality alone has no epoch times: its own records (and table)
        write("graph_classification_quality" if a.skip_speed else "graph_classification",
              result, load_before=load_before)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
