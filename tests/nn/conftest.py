"""Hand-built graphs for the layer parity tests, each as a DGL graph/block and an Adjacency."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.sampling.block import Block
from graphflow.sparse import Adjacency

# 7 nodes. Node 6 has no in-edges (and no out-edges); node 5 only an out-edge;
# (0 -> 1) appears twice; 3 -> 3 is a self-loop; 4 <- {0, 1, 2, 3}.
SRC = torch.tensor([0, 0, 1, 2, 3, 1, 2, 0, 3, 5, 2, 4])
DST = torch.tensor([1, 1, 2, 1, 3, 0, 0, 4, 4, 4, 3, 2])
NUM_NODES = 7


@dataclass
class Case:
    """One graph: DGL's view (graph or block) and ours, plus the DGL edge order."""

    name: str
    g: dgl.DGLGraph
    adj: Adjacency

    @property
    def num_src(self) -> int:
        return self.adj.num_src

    @property
    def num_dst(self) -> int:
        return self.adj.num_dst

    def to_csr(self, per_edge: torch.Tensor) -> torch.Tensor:
        """Per-edge data in DGL edge-id order -> CSR order."""
        return per_edge[self.adj.eids]


def full_case() -> Case:
    g = dgl.graph((SRC, DST), num_nodes=NUM_NODES)
    return Case("full", g, Adjacency.from_graph(g))


def block_case() -> Case:
    """A DGL block over seeds {4, 2, 6} (6 has no in-edges) and the same block as a
    graphflow :class:`Block` built from DGL's CSC, as a sampler would hand it over."""
    g = dgl.graph((SRC, DST), num_nodes=NUM_NODES)
    seeds = torch.tensor([4, 2, 6])
    blk = dgl.to_block(dgl.in_subgraph(g, seeds), dst_nodes=seeds)
    indptr, indices, eids = blk.adj_tensors("csc")  # CSR over destinations
    block = Block(src_nodes=blk.srcdata[dgl.NID], num_dst=blk.num_dst_nodes(), indptr=indptr,
                  indices=indices, eids=eids)  # eids: block-local edge ids here
    return Case("block", blk, Adjacency.from_block(block))


@pytest.fixture(params=["full", "block"])
def case(request) -> Case:
    return full_case() if request.param == "full" else block_case()


def _assert_close(a: torch.Tensor, b: torch.Tensor, what: str, tol: float) -> None:
    assert a is not None and b is not None, f"{what}: missing"
    torch.testing.assert_close(a, b, rtol=tol, atol=tol, msg=lambda m: f"{what}: {m}")


@pytest.fixture
def compare():
    """``compare(out, ref, grads, tol=1e-5)``: outputs match; then one random upstream
    gradient is pushed through both and every ``name: (ours, dgl's)`` leaf gradient matches."""

    def run(out: torch.Tensor, ref: torch.Tensor,
            grads: dict[str, tuple[torch.Tensor, torch.Tensor]], tol: float = 1e-5) -> None:
        assert out.shape == ref.shape, f"shape {tuple(out.shape)} != {tuple(ref.shape)}"
        _assert_close(out, ref, "output", tol)
        up = torch.randn(ref.shape, generator=torch.Generator().manual_seed(1), dtype=ref.dtype)
        (out * up).sum().backward()
        (ref * up).sum().backward()
        assert grads, "nothing to compare"
        for name, (ours, theirs) in grads.items():
            _assert_close(ours.grad, theirs.grad, f"grad of {name}", tol)

    return run


@pytest.fixture
def features():
    """``features(n, f)``: seeded float64 (n, f) features."""
    gen = torch.Generator().manual_seed(0)

    def make(n: int, f: int) -> torch.Tensor:
        return torch.randn(n, f, generator=gen, dtype=torch.float64)

    return make
