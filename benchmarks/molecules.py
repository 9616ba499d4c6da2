"""Molecules: graphflow's GIN against OGB's example GIN on DGL, the same molecules and split.

Both sides featurise the same SMILES with OGB's features (graphflow: ``graphflow.chem``, in
worker processes; the peer: ``ogb.utils.smiles2graph`` one molecule at a time, then one
``dgl.graph`` each), take the same scaffold split, and train OGB's example settings for
molecules (``ogb/examples/graphproppred/mol``, ``gnn = "gin"``): AtomEncoder, 5 GIN layers with
a BondEncoder each (messages ReLU(h_j + BondEncoder(e_ji)), eps learnt), width 300, batch
norm, dropout 0.5, mean read-out of the last layer, a linear head, batches of 32, Adam at
0.001, masked binary cross-entropy. The peer is OGB's model written on DGL's message passing
(PyG is not in this environment), batched by DGL's ``GraphDataLoader``; graphflow's side is
``gine`` with the options that make it OGB's network (MLPs d -> 2d -> d, the last layer
batch-normed without ReLU, the dropout on each layer's output: the parity test
``tests/graphs/test_ogb_mol_parity.py`` checks the same scores and gradients as OGB's code
with the same weights), so both sides train identical networks (the same parameter count,
in the JSON) from different initial values. Whole epochs alternate
in one process (:func:`benchmarks.records.alternate`); each side's test ROC-AUC (OGB's
``Evaluator`` figure, ``graphflow.graphs.evaluate``) is taken at its best validation epoch.

    python benchmarks/molecules.py                      # BBBP, 20 epochs a side
    python benchmarks/molecules.py --data ../shared/data/molecules/tox21.csv --epochs 10

The last line is JSON: each side's epoch seconds (median, range), the ratio of the medians
(peer / graphflow), the featurisation seconds, the test ROC-AUC and the parameter count of
both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OUTDATED_IGNORE", "1")  # ogb's import asks PyPI for its version
REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import graphflow  # noqa: F401,E402  (OpenMP defaults before torch work)
from graphflow.chem.featurize import featurize  # noqa: E402
from graphflow.chem.splits import scaffold_split  # noqa: E402
from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.graphs.batch import GraphBatcher  # noqa: E402
from graphflow.graphs.evaluate import evaluate  # noqa: E402
from graphflow.graphs.model import GraphModel  # noqa: E402
from graphflow.sparse import Adjacency  # noqa: E402
from graphflow_plugins.models.gine import GINEModel, GINEOptions  # noqa: E402

from benchmarks.records import alternate, load, ratio_spread, spread, write  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "molecules" / "bbbp.csv"


def masked_bce(score: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """OGB's example loss: BCE with logits over the labelled entries (``y == y``)."""
    labelled = ~torch.isnan(y)
    return F.binary_cross_entropy_with_logits(score[labelled], y[labelled])


def read(path: Path, limit: int) -> tuple[list[str], np.ndarray]:
    table = pacsv.read_csv(path)
    smiles = table.column("smiles").to_pylist()
    targets = [c for c in table.column_names if c != "smiles"]
    y = np.column_stack([table.column(c).cast(pa.float64()).to_numpy(zero_copy_only=False)
                         for c in targets]).astype(np.float32)
    if limit:  # evenly spaced rows, so that both classes stay in every part
        rows = np.unique(np.linspace(0, len(smiles) - 1, limit).astype(np.int64))
        smiles, y = [smiles[i] for i in rows.tolist()], y[rows]
    return smiles, y


# --------------------------------------------------------------------------- graphflow
class GraphflowSide:
    def __init__(self, smiles, y, hidden, layers, seed, batch):
        t = time.perf_counter()
        mols = featurize(smiles, scaffolds=True)
        self.featurize_s = time.perf_counter() - t
        keep = np.flatnonzero(mols.ok)
        self.keep = keep
        atoms, edges = mols.num_atoms[keep], mols.num_edges[keep]
        ptr = np.zeros(keep.size + 1, dtype=np.int64)
        np.cumsum(atoms, out=ptr[1:])
        shift = np.repeat(ptr[:-1], edges)
        g = dgl.graph((torch.from_numpy(mols.src + shift), torch.from_numpy(mols.dst + shift)),
                      num_nodes=int(ptr[-1]))
        g.edata["edge_feat"] = torch.from_numpy(mols.bond_feat.astype(np.float32))
        adj = Adjacency.from_graph(g, feat="edge_feat")
        self.batcher = GraphBatcher(adj, torch.from_numpy(ptr),
                                    torch.from_numpy(mols.atom_feat.astype(np.float32)))
        self.y = torch.from_numpy(y[keep])
        self.split = {k: torch.from_numpy(v) for k, v in scaffold_split(
            [mols.scaffolds[i] for i in keep.tolist()]).items()}
        torch.manual_seed(seed)
        # OGB's network exactly (examples/bbbp_gin.toml; tests/graphs/test_ogb_mol_parity.py):
        # MLPs d -> 2d -> d, every layer batch-normed (the last without ReLU), the dropout on
        # each layer's output
        options = GINEOptions(layers=layers, hidden=hidden, norm="batch", learn_eps=True,
                              mlp_ratio=2, norm_last=True, activation_last=False,
                              dropout=0.5, dropout_at="output", input_dropout=0.0,
                              input_encoder="atom", edge_encoder="bond")
        encoder = GINEModel(options).build(9, hidden)
        probe = self.batcher.batch(torch.tensor([0]))
        self.model = GraphModel.probe(encoder, probe, "last", self.y.shape[1], pooling="mean",
                                      dropout=0.0)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.gen = torch.Generator().manual_seed(seed)
        self.batch = batch

    def epoch(self, _rep: int = 0) -> None:
        self.model.train()
        for b in self.batcher.epoch(self.split["train"], self.batch, generator=self.gen):
            loss = masked_bce(self.model(b)[0], self.y[b.graphs])
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()

    @torch.no_grad()
    def rocauc(self, part: str) -> float:
        self.model.eval()
        ids = self.split[part]
        scores = torch.cat([self.model(b)[0] for b in self.batcher.epoch(ids, 1024)])
        return evaluate("rocauc", self.y[ids], scores)["rocauc"]


# --------------------------------------------------------------------------- peer
class OGBGINConv(nn.Module):
    """OGB's mol ``GINConv`` on DGL: MLP((1 + eps) h_i + sum_j ReLU(h_j + BondEncoder(e)))."""

    def __init__(self, width: int):
        super().__init__()
        from ogb.graphproppred.mol_encoder import BondEncoder

        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.BatchNorm1d(2 * width),
                                 nn.ReLU(), nn.Linear(2 * width, width))
        self.eps = nn.Parameter(torch.zeros(1))
        self.bond_encoder = BondEncoder(width)

    def forward(self, g, h, e):
        fn = dgl.function
        with g.local_scope():
            g.ndata["h"] = h
            g.edata["e"] = self.bond_encoder(e)
            g.apply_edges(fn.u_add_e("h", "e", "m"))
            g.edata["m"] = F.relu(g.edata["m"])
            g.update_all(fn.copy_e("m", "m"), fn.sum("m", "agg"))
            return self.mlp((1 + self.eps) * h + g.ndata["agg"])


class OGBGIN(nn.Module):
    """OGB's ``GNN(gnn_type="gin", virtual_node=False)``: JK last, mean pooling."""

    def __init__(self, width: int, layers: int, tasks: int):
        super().__init__()
        from ogb.graphproppred.mol_encoder import AtomEncoder

        self.atom_encoder = AtomEncoder(width)
        self.convs = nn.ModuleList(OGBGINConv(width) for _ in range(layers))
        self.norms = nn.ModuleList(nn.BatchNorm1d(width) for _ in range(layers))
        self.pool = dgl.nn.AvgPooling()
        self.head = nn.Linear(width, tasks)

    def forward(self, g):
        h = self.atom_encoder(g.ndata["x"])
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            h = norm(conv(g, h, g.edata["e"]))
            h = F.dropout(h if i == len(self.convs) - 1 else F.relu(h), 0.5, self.training)
        return self.head(self.pool(g, h))


class PeerSide:
    def __init__(self, smiles, y, keep, split, hidden, layers, seed, batch):
        from ogb.utils import smiles2graph

        t = time.perf_counter()
        graphs = []
        for i in keep.tolist():
            d = smiles2graph(smiles[i])
            gi = dgl.graph((torch.from_numpy(d["edge_index"][0]),
                            torch.from_numpy(d["edge_index"][1])), num_nodes=d["num_nodes"])
            gi.ndata["x"] = torch.from_numpy(d["node_feat"])
            gi.edata["e"] = torch.from_numpy(d["edge_feat"])
            graphs.append(gi)
        self.featurize_s = time.perf_counter() - t
        self.graphs, self.y, self.split = graphs, torch.from_numpy(y[keep]), split
        torch.manual_seed(seed)
        self.model = OGBGIN(hidden, layers, self.y.shape[1])
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.batch = batch
        self.train_loader = self.loader(split["train"], True)

    def loader(self, ids, shuffle, batch=None):
        data = [(self.graphs[i], self.y[i]) for i in ids.tolist()]
        return dgl.dataloading.GraphDataLoader(data, batch_size=batch or self.batch,
                                               shuffle=shuffle)

    def epoch(self, _rep: int = 0) -> None:
        self.model.train()
        for g, y in self.train_loader:
            loss = masked_bce(self.model(g), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()

    @torch.no_grad()
    def rocauc(self, part: str) -> float:
        self.model.eval()
        scores, ys = [], []
        for g, y in self.loader(self.split[part], False, 1024):
            scores.append(self.model(g))
            ys.append(y)
        return evaluate("rocauc", torch.cat(ys), torch.cat(scores))["rocauc"]


def run(data: Path, epochs: int, hidden: int, layers: int, seed: int, batch: int,
        limit: int = 0) -> dict:
    smiles, y = read(data, limit)
    ours = GraphflowSide(smiles, y, hidden, layers, seed, batch)
    peer = PeerSide(smiles, y, ours.keep, ours.split, hidden, layers, seed, batch)
    sides = {"graphflow": ours, "peer": peer}
    best = {name: (-1.0, float("nan"), 0) for name in sides}  # (val, test, epoch)

    def one(name):
        def go(rep: int) -> None:
            sides[name].epoch(rep)
        return go

    times: dict[str, list[float]] = {name: [] for name in sides}
    for epoch in range(1, epochs + 1):
        t = alternate({name: one(name) for name in sides}, 1) if epoch % 2 else \
            alternate({name: one(name) for name in reversed(list(sides))}, 1)
        for name, seconds in t.items():
            times[name] += seconds
            side = sides[name]
            val = side.rocauc("val")
            if val > best[name][0]:
                best[name] = (val, side.rocauc("test"), epoch)
        print(f"epoch {epoch}: " + ", ".join(f"{n} {times[n][-1]:.2f} s (val {best[n][0]:.3f} "
                                             f"best)" for n in sides), file=sys.stderr)
    return {"data": str(data), "molecules": int(ours.keep.size), "epochs": epochs,
            "hidden": hidden, "layers": layers, "seed": seed,
            "featurize_s": {"graphflow": ours.featurize_s, "peer": peer.featurize_s},
            "epoch_s": {name: spread(v) for name, v in times.items()},
            "ratio": ratio_spread(times["peer"], times["graphflow"]),
            "test_rocauc": {name: best[name][1] for name in sides},
            "best_epoch": {name: best[name][2] for name in sides},
            "parameters": {name: sum(p.numel() for p in sides[name].model.parameters())
                           for name in sides},
            "threads": torch.get_num_threads()}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--hidden", type=int, default=300)
    p.add_argument("--layers", type=int, default=5)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=0, help="N evenly spaced molecules only")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/molecules/")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    before = load()
    result = run(args.data, args.epochs, args.hidden, args.layers, args.seed, args.batch,
                 args.limit)
    if args.record:
        write("molecules", result, load_before=before)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
