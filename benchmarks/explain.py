"""Explanations with ground truth: graphflow's explainers vs PyG's on the same weights.

BA-Shapes, Tree-Cycles or Tree-Grid (``--data``; Ying et al. 2019, ``graphflow.io.motifs``:
``--motifs`` motifs, ``--noise`` random edges) and the paper's node model
(:class:`PaperGCN`: three graph convolutions of 20 units, sum aggregation with the node
itself, the three layer outputs concatenated before a linear head; Adam ``--lr`` 0.001,
weight decay 5e-3, ``--train-epochs`` 2000 full-batch epochs on 80% of the nodes). The
trained weights are copied into the same network built from ``torch_geometric.nn.GCNConv``,
and every motif node is explained by both sides with the same method and settings
(``--method``):

* ``gnnexplainer`` (default): 100 epochs, Adam lr 0.01, PyG's default coefficients, a
  feature mask shared by the nodes (PyG ``common_attributes``); graphflow batched over the
  union of the nodes' computation subgraphs (:mod:`graphflow.explain.gnnexplainer`), PyG
  one ``Explainer`` call per node;
* ``pgexplainer``: the mask generator trained on every motif node, 30 epochs, Adam lr
  0.003, PyG's default coefficients and temperatures, then every node explained;
  graphflow one Adam step per batch of 64 nodes (:mod:`graphflow.explain.pgexplainer`),
  PyG one per node (``PGExplainer.train`` per node and epoch, as its example does). The
  embeddings: graphflow the last hidden layer (the third convolution after its ReLU),
  PyG its own choice, the last message-passing layer's output (before the ReLU).

The sides alternate (``benchmarks/records.py``), so background load hits both alike.

Figures: the explanation ROC-AUC against the motif edges (each explained node's
computation-subgraph edges pooled, as PyG's example computes it), seconds per explained
node (median, min, max of the repetitions) and their ratio (PyG / graphflow), the GCN's
accuracy, and :func:`truth_check` (whether the motif edges alone keep the model's
predictions, i.e. whether a perfect explanation exists).

    pip install torch_geometric -c constraints.txt
    flock /tmp/graphflow-bench.lock python benchmarks/explain.py [--method pgexplainer] \
        [--reps 1] [--record]

``--tiny`` makes a graph of 8 motifs, trains 20 epochs and explains with few epochs (what
the test runs). The last output line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.records import alternate, load, ratio_spread, spread, write  # noqa: E402
from graphflow.explain.gnnexplainer import COEFFS, gnn_explainer, mask_entropy  # noqa: E402
from graphflow.explain.metrics import roc_auc  # noqa: E402
from graphflow.explain.pgexplainer import pg_explainer  # noqa: E402
from graphflow.explain.subgraph import make_units  # noqa: E402
from graphflow.io.motifs import ba_shapes, tree_cycles, tree_grid  # noqa: E402
from graphflow.nn.gcn import GCNConv  # noqa: E402
from graphflow.nn.stack import add_self_loops  # noqa: E402
from graphflow.sparse import Adjacency  # noqa: E402


GRAPHS = {"ba_shapes": ba_shapes, "tree_cycles": tree_cycles, "tree_grid": tree_grid}


class PaperGCN(nn.Module):
    r"""The GNNExplainer paper's node model (``GcnEncoderNode`` of its code): three graph
    convolutions of ``hidden`` units whose outputs are concatenated before a linear head.

    ``agg = "sum"`` (default) is the paper's ``GraphConv``: :math:`h' = (A + I) h W + b`,
    each layer's output L2-normalised (its ``normalize_embedding``), ReLU after the first two
    layers, none after the last; ``concat`` feeds ``[h_1 \| h_2 \| h_3]`` (60 units) to the
    head. ``self_term = False`` drops the :math:`I`: :math:`h' = A h W + b`, which is what the
    paper's code runs for this model (``GcnEncoderGraph`` sets ``add_self = not concat``).
    ``agg = "gcn"``, ``concat = False`` is PyG's plain 3-layer GCN (symmetric normalisation,
    ReLU after every layer, the head on ``h_3``). ``forward(adj, x)``.
    """

    def __init__(self, in_dim: int, classes: int, hidden: int = 20, *, agg: str = "sum",
                 concat: bool = True, self_term: bool = True):
        super().__init__()
        norm = "none" if agg == "sum" else "both"
        self.agg, self.concat, self.self_term = agg, concat, self_term
        self.convs = nn.ModuleList([GCNConv(in_dim, hidden, norm=norm),
                                    GCNConv(hidden, hidden, norm=norm),
                                    GCNConv(hidden, hidden, norm=norm)])
        self.lin = nn.Linear(hidden * (3 if concat else 1), classes)

    def layer(self, i: int, h: torch.Tensor) -> torch.Tensor:
        """Layer ``i``'s normalisation and activation of its convolution's output ``h``."""
        if self.agg == "sum":
            h = nn.functional.normalize(h, dim=-1)
            return torch.relu(h) if i < len(self.convs) - 1 else h
        return torch.relu(h)

    def hidden(self, adj: Adjacency, x: torch.Tensor) -> torch.Tensor:
        """(N, 60 or 20) what the head reads: the concatenated (or last) layer outputs."""
        a = add_self_loops(adj) if self.self_term else adj
        outs = []
        for i, conv in enumerate(self.convs):
            x = self.layer(i, conv(a, x))
            outs.append(x)
        return torch.cat(outs, -1) if self.concat else x

    def forward(self, adj: Adjacency, x: torch.Tensor) -> torch.Tensor:
        return self.lin(self.hidden(adj, x))


def pyg_twin(model: PaperGCN):
    """The same network in PyG, with ``model``'s weights (``agg = "sum"``: ``GCNConv(normalize
    = False)`` over the edges plus the self term ``h W``, so PyG's edge mask covers the same
    edges as graphflow's)."""
    from torch_geometric.nn import GCNConv as PygConv

    class Twin(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.convs = nn.ModuleList([PygConv(c.in_dim, c.out_dim,
                                                normalize=model.agg != "sum")
                                        for c in model.convs])
            self.lin = nn.Linear(model.lin.in_features, model.lin.out_features)

        def forward(self, x, edge_index):
            outs = []
            for i, conv in enumerate(self.convs):
                h = conv(x, edge_index)
                if model.agg == "sum" and model.self_term:
                    h = h + conv.lin(x)  # the self term of (A + I) h W
                x = model.layer(i, h)
                outs.append(x)
            return self.lin(torch.cat(outs, -1) if model.concat else x)

    twin = Twin()
    with torch.no_grad():
        for ours, theirs in zip(model.convs, twin.convs):
            theirs.lin.weight.copy_(ours.weight.T)
            theirs.bias.copy_(ours.bias)
        twin.lin.load_state_dict(model.lin.state_dict())
    return twin.eval()


def train(g, a: argparse.Namespace) -> tuple[PaperGCN, Adjacency, float]:
    torch.manual_seed(a.seed)
    adj = Adjacency.from_edges(g.src, g.dst, g.num_nodes, g.num_nodes)
    model = PaperGCN(g.feat.shape[1], g.num_classes, agg=a.agg, concat=a.concat,
                     self_term=a.self_term)
    gen = torch.Generator().manual_seed(a.seed)
    train_mask = torch.rand(g.num_nodes, generator=gen) < 0.8
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=5e-3)
    for _ in range(a.train_epochs):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(adj, g.feat)[train_mask], g.label[train_mask])
        loss.backward()
        opt.step()
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        pred = model(adj, g.feat).argmax(-1)
    acc = float((pred[~train_mask] == g.label[~train_mask]).float().mean())
    return model, adj, acc


@torch.no_grad()
def truth_check(model: PaperGCN, adj: Adjacency, g, nodes: torch.Tensor) -> dict[str, float]:
    """Whether the motif edges explain the model at ``nodes``: the share of the nodes whose
    predicted class the model keeps (and the mean probability of that class) when it reads
    each node's computation subgraph with the motif edges alone (weight 1, every other edge
    0), and with every edge at 0.5 (where GNNExplainer's masks start, sigmoid(0)); and the
    mean count of computation-subgraph edges and of motif edges per node (GNNExplainer's size
    term charges 0.005 per kept edge, so the non-motif count is what keeping every edge costs).

    A high ``motif_only`` share says a perfect explanation exists for this model, so a low
    ROC-AUC is the explainer's optimisation, not the model ignoring the motif."""
    cg = make_units(adj, nodes, 3)
    xs = g.feat[cg.node]
    full = cg.outputs(model, cg.adjacency(), xs).softmax(-1)  # (T, C)
    y = full.argmax(-1)
    motif = g.motif_edge[cg.edge_ids].float()  # (Eu,)
    count = torch.bincount(cg.edge_target, minlength=nodes.numel()).float()  # (T,)
    out = {"edges_per_node": round(float(count.mean()), 1),
           "motif_edges_per_node": round(float(motif.sum()) / nodes.numel(), 1)}
    for name, weight in (("motif_only", motif), ("uniform_half", torch.full_like(motif, 0.5))):
        prob = cg.outputs(model, cg.adjacency(weight), xs).softmax(-1)
        out[name] = round(float((prob.argmax(-1) == y).float().mean()), 4)
        out[f"{name}_prob"] = round(float(prob.gather(1, y[:, None]).mean()), 4)
    return out


def objective_check(model: PaperGCN, adj: Adjacency, g, exp,
                    fit_epochs: int = 300) -> dict[str, float]:
    """GNNExplainer's loss (:mod:`graphflow.explain.gnnexplainer`, its :data:`COEFFS`) per
    explained node, mean over the nodes: at the explainer's own masks (``exp``), and at two
    fixed edge masks, the motif edges alone (1, every other edge 0) and every edge kept (1),
    each with a feature mask fitted to it (``fit_epochs`` Adam steps, lr 0.1). When the
    motif-only loss is barely below the every-edge one, the objective hardly tells the motif
    from the rest, whatever the optimiser does; ``motif_below_explainer`` is the share of
    nodes whose motif-only loss is below the explainer's own."""
    c = COEFFS
    nodes = exp.targets
    cg = make_units(adj, nodes, 3)
    xs = g.feat[cg.node]
    t = nodes.numel()
    y = exp.target_class
    count = torch.bincount(cg.edge_target, minlength=t).clamp(min=1).float()  # (T,)

    def loss(em: torch.Tensor, fm: torch.Tensor) -> torch.Tensor:  # (T,) per node
        out = cg.outputs(model, cg.adjacency(em), xs * fm[cg.node_target])
        per = nn.functional.cross_entropy(out, y, reduction="none")
        per = per + torch.zeros(t).index_add_(0, cg.edge_target, c["edge_size"] * em)
        ent = torch.zeros(t).index_add_(0, cg.edge_target, mask_entropy(em, c["EPS"]))
        per = per + c["edge_ent"] * ent / count
        return (per + c["node_feat_size"] * fm.mean(1)
                + c["node_feat_ent"] * mask_entropy(fm, c["EPS"]).mean(1))

    def fitted(em: torch.Tensor) -> torch.Tensor:
        gen = torch.Generator().manual_seed(0)
        param = (torch.randn(t, g.feat.shape[1], generator=gen) * 0.1).requires_grad_()
        opt = torch.optim.Adam([param], lr=0.1)
        for _ in range(fit_epochs):
            opt.zero_grad()
            loss(em, param.sigmoid()).sum().backward()
            opt.step()
        with torch.no_grad():
            return loss(em, param.sigmoid())

    e = int(adj.eids.max()) + 1
    key = exp.edge_target * e + exp.edge_ids  # match exp's edges to the union's
    order = torch.argsort(key)
    where = order[torch.searchsorted(key[order], cg.edge_target * e + cg.edge_ids)]
    motif = g.motif_edge[cg.edge_ids].float()  # (Eu,)
    with torch.no_grad():
        own = loss(exp.edge_mask[where], exp.feature_mask)
    at_motif, at_all = fitted(motif), fitted(torch.ones_like(motif))
    return {"explainer": round(float(own.mean()), 4),
            "motif_only": round(float(at_motif.mean()), 4),
            "all_edges": round(float(at_all.mean()), 4),
            "motif_below_explainer": round(float((at_motif < own).float().mean()), 4)}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--motifs", type=int, default=80)
    p.add_argument("--noise", type=float, default=0.1)
    p.add_argument("--data", choices=tuple(GRAPHS), default="ba_shapes")
    p.add_argument("--train-epochs", type=int, default=2000)
    p.add_argument("--lr", type=float, default=0.001)
    p.add_argument("--agg", choices=("sum", "gcn"), default="sum",
                   help="the model's aggregation: sum (the paper's GraphConv, default) or gcn "
                        "(symmetric normalisation, PyG's GCN)")
    p.add_argument("--no-concat", dest="concat", action="store_false",
                   help="the head reads the last layer only (default: the three layers "
                        "concatenated, as the paper's model)")
    p.add_argument("--no-self", dest="self_term", action="store_false",
                   help="sum aggregation without the node's own term, h' = A h W + b (what the "
                        "paper's code runs for the concatenating node model; default (A + I) h W)")
    p.add_argument("--method", choices=("gnnexplainer", "pgexplainer"), default="gnnexplainer",
                   help="the explainer, on both sides (default gnnexplainer)")
    p.add_argument("--epochs", type=int,
                   help="explainer epochs (default: 100 gnnexplainer, 30 pgexplainer)")
    p.add_argument("--explain-lr", type=float,
                   help="the explainer's Adam learning rate, both sides (default: 0.01 "
                        "gnnexplainer, PyG's; 0.003 pgexplainer)")
    p.add_argument("--explained", choices=("motifs", "first"), default="motifs",
                   help="the nodes explained: every motif node (default), or each motif's "
                        "first node (the one linked to the base), as the paper's and PyG's "
                        "examples evaluate; roc_auc_first always scores that subset")
    p.add_argument("--sides", default="graphflow,pyg",
                   help="the sides to run, comma-separated (default graphflow,pyg; "
                        "graphflow alone gives its ROC-AUC without PyG's run)")
    p.add_argument("--objective", action="store_true",
                   help="gnnexplainer: also report objective_check, the explainer's loss at "
                        "its masks, at the motif edges alone and at every edge")
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--tiny", action="store_true")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--record", action="store_true", help="save under benchmarks/results/")
    a = p.parse_args(argv)
    if a.tiny:
        a.motifs, a.train_epochs = 8, 20
        a.epochs = a.epochs or (5 if a.method == "gnnexplainer" else 2)
    a.epochs = a.epochs or (100 if a.method == "gnnexplainer" else 30)
    a.explain_lr = a.explain_lr or (0.01 if a.method == "gnnexplainer" else 0.003)
    if a.threads:
        torch.set_num_threads(a.threads)
    chosen = [name.strip() for name in a.sides.split(",") if name.strip()]
    if not chosen or set(chosen) - {"graphflow", "pyg"}:
        p.error(f"--sides {a.sides}: choose from graphflow, pyg")
    before = load()
    g = GRAPHS[a.data](motifs=a.motifs, noise=a.noise, seed=a.seed)
    model, adj, acc = train(g, a)
    edge_index = torch.stack([g.src, g.dst])
    if "pyg" in chosen:
        from torch_geometric.explain import Explainer, GNNExplainer, PGExplainer

        twin = pyg_twin(model)
        with torch.no_grad():
            assert torch.allclose(twin(g.feat, edge_index), model(adj, g.feat), atol=1e-4)
    nodes = (g.motif >= 0).nonzero().squeeze(1)  # every motif node
    first = torch.ones(nodes.numel(), dtype=torch.bool)  # (T,) each motif's first node
    first[1:] = g.motif[nodes[1:]] != g.motif[nodes[:-1]]
    if a.explained == "first":
        nodes, first = nodes[first], first[first]
    config = dict(mode="multiclass_classification", task_level="node", return_type="raw")
    scores: dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
    explanations: dict = {}
    calls: list[str] = []

    def pooled(explain) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        preds, truth, owner = [], [], []
        for i, node in enumerate(nodes.tolist()):  # PyG explains one node per call
            e = explain(node)
            hard = e.edge_mask > 0
            preds.append(e.edge_mask[hard])
            truth.append(g.motif_edge[hard])
            owner.append(torch.full((int(hard.sum()),), i))
        return torch.cat(preds), torch.cat(truth), torch.cat(owner)

    def auc(name: str, subset: torch.Tensor | None = None) -> float:
        """ROC-AUC of ``name``'s pooled edges, of every explained node or of ``subset``."""
        pred, truth, owner = scores[name]
        keep = slice(None) if subset is None else subset[owner]
        return roc_auc(pred[keep], truth[keep])

    def ours(rep: int) -> None:
        if a.method == "gnnexplainer":
            exp = gnn_explainer(model, adj, g.feat, nodes, hops=3, epochs=a.epochs,
                               lr=a.explain_lr, seed=rep)
        else:
            with torch.no_grad():
                z = model.hidden(adj, g.feat)
            exp = pg_explainer(model, adj, g.feat, nodes, hops=3, embeddings=z,
                               epochs=a.epochs, lr=a.explain_lr, seed=rep)
        scores["graphflow"] = (exp.edge_mask, g.motif_edge[exp.edge_ids], exp.edge_target)
        explanations["graphflow"] = exp
        calls.append("graphflow")

    def pyg(rep: int) -> None:
        torch.manual_seed(rep)
        if a.method == "gnnexplainer":
            algorithm = GNNExplainer(epochs=a.epochs, lr=a.explain_lr)
            explainer = Explainer(model=twin, algorithm=algorithm,
                                  explanation_type="model", node_mask_type="common_attributes",
                                  edge_mask_type="object", model_config=config)
            scores["pyg"] = pooled(lambda node: explainer(g.feat, edge_index, index=node))
        else:
            algorithm = PGExplainer(epochs=a.epochs, lr=a.explain_lr)
            explainer = Explainer(model=twin, algorithm=algorithm,
                                  explanation_type="phenomenon", edge_mask_type="object",
                                  model_config=config)
            with torch.no_grad():
                target = twin(g.feat, edge_index).argmax(-1)  # the model's predictions
            for epoch in range(a.epochs):
                for node in nodes.tolist():  # PyG trains one node per step
                    algorithm.train(epoch, twin, g.feat, edge_index, target=target,
                                    index=node)
            scores["pyg"] = pooled(lambda node: explainer(g.feat, edge_index, target=target,
                                                          index=node))
        calls.append("pyg")

    def progress(name: str, rep: int, seconds: float) -> None:
        print(f"rep {rep + 1} {name}: {seconds:.2f} s, ROC-AUC "
              f"{auc(name):.4f}", file=sys.stderr, flush=True)

    sides = {"graphflow": ours, "pyg": pyg}
    times = alternate({name: sides[name] for name in chosen}, a.reps, on_time=progress)
    per_node = {n: [s / nodes.numel() for s in t] for n, t in times.items()}
    result = {"method": a.method, "data": f"{a.data}(motifs={a.motifs}, noise={a.noise})",
              "nodes": g.num_nodes, "explained": int(nodes.numel()),
              "settings": {k: getattr(a, k) for k in ("train_epochs", "lr", "agg", "concat",
                                                      "self_term", "epochs", "explain_lr",
                                                      "explained", "reps", "seed")},
              "gcn_test_acc": round(acc, 4), "truth_check": truth_check(model, adj, g, nodes),
              "calls": calls, "repetitions": times,
              "roc_auc": {n: round(auc(n), 4) for n in scores},
              "roc_auc_first": {n: round(auc(n, first), 4) for n in scores},
              **{f"{n}_s_per_node": round(spread(t)["median"], 5) for n, t in per_node.items()},
              "per_node_spread": {n: spread(t) for n, t in per_node.items()},
              **({"ratio_spread": ratio_spread(times["pyg"], times["graphflow"])}
                 if len(times) == 2 else {})}
    if a.objective and a.method == "gnnexplainer" and "graphflow" in explanations:
        result["objective"] = objective_check(model, adj, g, explanations["graphflow"],
                                              fit_epochs=20 if a.tiny else 300)
    if a.record:
        name = "explain" + ("" if a.data == "ba_shapes" else f"_{a.data}")
        write(name if a.method == "gnnexplainer" else f"{name}_{a.method}", result,
              load_before=before)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
