"""Tiny hand-built graphs and trained-looking models for the portable-export tests.

Models come from the first-party ``[model]`` plugins (what a run trains), with their
parameters perturbed so that biases and norms are not at their initial values.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch

from graphflow.nn.stack import GNNStack
from graphflow.sparse import Adjacency
from graphflow_plugins.models.gat import GATModel
from graphflow_plugins.models.gcn import GCNModel
from graphflow_plugins.models.gin import GINModel
from graphflow_plugins.models.sage import SAGEModel
from graphflow_plugins.models.sgc import SGCModel

IN_DIM, OUT_DIM = 5, 3
KINDS = {"gcn": GCNModel, "sage": SAGEModel, "gin": GINModel, "sgc": SGCModel, "gat": GATModel}


def build(kind: str, seed: int = 0, **options) -> GNNStack:
    """An eval-mode model of ``[model] type = kind`` with random (non-initial) parameters."""
    cls = KINDS[kind]
    torch.manual_seed(seed)
    model = cls(cls.Options(**options)).build(IN_DIM, OUT_DIM)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "eps" not in name:
                p.add_(0.1 * torch.randn_like(p))
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm1d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
    return model.eval()


def graph(seed: int = 0, n: int = 9, e: int = 24) -> tuple[torch.Tensor, ...]:
    """``x`` (n, IN_DIM), ``src``, ``dst``, ``weight`` (e,): duplicates, one self-loop, and a
    node without in-edges."""
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(0, n, (e,), generator=gen)
    dst = torch.randint(0, n - 1, (e,), generator=gen)  # node n-1 has no in-edges
    src[0], dst[0] = 2, 2  # one existing self-loop
    src[1], dst[1], src[2], dst[2] = 0, 1, 0, 1  # a duplicate edge
    weight = torch.rand(e, generator=gen) + 0.5
    return torch.randn(n, IN_DIM, generator=gen), src, dst, weight


def blocks(layers: int, seed: int = 0) -> tuple[torch.Tensor, list[tuple[torch.Tensor, ...]]]:
    """``x`` and one ``(src, dst, weight, num_dst)`` block per layer, sizes shrinking from
    the input side; each block's destinations are the first ``num_dst`` of its sources."""
    gen = torch.Generator().manual_seed(seed)
    sizes = [4 + 3 * (layers - i) for i in range(layers + 1)]  # e.g. 10, 7, 4
    out = []
    for i in range(layers):
        e = 3 * sizes[i]
        src = torch.randint(0, sizes[i], (e,), generator=gen)
        dst = torch.randint(0, sizes[i + 1] - 1, (e,), generator=gen)  # last dst: no edges
        src[0], dst[0] = 1, 1  # a self-loop
        out.append((src, dst, torch.rand(e, generator=gen) + 0.5,
                    torch.tensor(sizes[i + 1], dtype=torch.int64)))
    return torch.randn(sizes[0], IN_DIM, generator=gen), out


@torch.no_grad()
def reference_full(model: GNNStack, x, src, dst, weight, weighted: bool = True) -> torch.Tensor:
    """graphflow's own output on the full graph (the weights as the adjacency's values)."""
    adj = Adjacency.from_edges(src, dst, x.shape[0], x.shape[0],
                               values=weight if weighted else None)
    return model(adj, x)


@torch.no_grad()
def reference_blocks(model: GNNStack, x, blks, weighted: bool = True) -> torch.Tensor:
    """graphflow's own output on blocks."""
    adjs, num_src = [], x.shape[0]
    for src, dst, weight, num_dst in blks:
        adjs.append(Adjacency.from_edges(src, dst, num_src, int(num_dst),
                                         values=weight if weighted else None))
        num_src = int(num_dst)
    return model(adjs, x)


RUNNER = Path(__file__).with_name("run_exported.py")


def run_exported(cases: list[dict], folder: Path) -> list[torch.Tensor]:
    """Run exported files in a fresh Python that imports neither graphflow nor DGL (the
    runner asserts it); one process for all ``cases`` (see run_exported.py)."""
    cases_path, out_path = folder / "cases.pt", folder / "outputs.pt"
    torch.save([{**c, "file": str(c["file"])} for c in cases], cases_path)
    proc = subprocess.run([sys.executable, "-I", str(RUNNER), str(cases_path), str(out_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "without graphflow or dgl" in proc.stdout
    return torch.load(out_path, weights_only=True)
