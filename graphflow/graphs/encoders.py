r"""Embeddings of categorical node and edge features: OGB's ``AtomEncoder`` / ``BondEncoder``.

A molecule's atoms and bonds carry categorical features (:mod:`graphflow.chem.featurize`: 9
per atom, 3 per bond, as integer codes). OGB's reference models (``ogb.graphproppred.mol_encoder``)
embed each feature with its own table and sum the embeddings:

.. math:: h_i = \sum_{k=1}^{K} E_k[x_{ik}], \qquad E_k \in \mathbb{R}^{n_k \times d}

:class:`CategoricalEncoder` holds the K tables as one (sum n_k, d) weight, each initialised as
OGB does (``xavier_uniform_`` on each table), and computes the sum in one ``embedding_bag``
over the codes shifted by each table's offset: one kernel instead of K lookups and K - 1 adds.

Shapes: codes (n, K), integer or float holding integers (what a collection's ``ndata["feat"]``
/ ``edata["edge_feat"]`` hold) -> (n, d).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from graphflow.chem.featurize import ATOM_FEATURE_DIMS, BOND_FEATURE_DIMS
from graphflow.errors import DataError
from graphflow.sparse.features import to_dense


class CategoricalEncoder(nn.Module):
    """The sum of one embedding per categorical column (see the module docstring).

    :param emb_dim: the embedding width ``d``.
    :param dims: the number of values of each column, ``n_1 .. n_K``.
    """

    def __init__(self, emb_dim: int, dims: Sequence[int]):
        super().__init__()
        self.dims = [int(d) for d in dims]
        self.emb_dim = int(emb_dim)
        self.weight = nn.Parameter(torch.empty(sum(self.dims), self.emb_dim))
        offsets = torch.zeros(len(self.dims), dtype=torch.int64)
        offsets[1:] = torch.cumsum(torch.tensor(self.dims[:-1]), 0)
        self.register_buffer("offsets", offsets, persistent=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with torch.no_grad():  # one xavier_uniform_ per table, as OGB's separate Embeddings
            for block in torch.split(self.weight, self.dims):
                nn.init.xavier_uniform_(block)

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        codes = to_dense(codes)
        if codes.dim() != 2 or codes.shape[1] != len(self.dims):
            raise DataError(f"{type(self).__name__}: expected ({len(self.dims)} categorical "
                            f"columns), got features of shape {tuple(codes.shape)}; load the "
                            f'molecules with featurization = "ogb"')
        idx = codes.long() + self.offsets  # (n, K) rows of the joined table
        return F.embedding_bag(idx, self.weight, mode="sum")  # (n, d)

    def extra_repr(self) -> str:
        return f"{self.emb_dim}, dims={self.dims}"


class AtomEncoder(CategoricalEncoder):
    """OGB's ``AtomEncoder``: the 9 atom features (sizes ``get_atom_feature_dims()``)."""

    def __init__(self, emb_dim: int):
        super().__init__(emb_dim, ATOM_FEATURE_DIMS)


class BondEncoder(CategoricalEncoder):
    """OGB's ``BondEncoder``: the 3 bond features (sizes ``get_bond_feature_dims()``)."""

    def __init__(self, emb_dim: int):
        super().__init__(emb_dim, BOND_FEATURE_DIMS)


class Encoded(nn.Module):
    """A node model whose input layer is ``encoder``: ``stack(adj, encoder(x))``, with the
    stack's per-layer outputs (``layer_outputs``: the embedded input first) for the graph
    read-outs."""

    def __init__(self, encoder: nn.Module, stack: nn.Module):
        super().__init__()
        self.input_encoder = encoder
        self.stack = stack

    @property
    def takes_graphs(self) -> bool:
        """Whether the stack reads the batch's graphs (a virtual node)."""
        return bool(getattr(self.stack, "takes_graphs", False))

    def forward(self, adj, x: torch.Tensor, **graphs) -> torch.Tensor:
        return self.stack(adj, self.input_encoder(x), **graphs)

    def layer_outputs(self, adj, x: torch.Tensor, **graphs) -> list[torch.Tensor]:
        return self.stack.layer_outputs(adj, self.input_encoder(x), **graphs)

    @property
    def num_layers(self) -> int:
        return self.stack.num_layers

    @property
    def out_dim(self) -> int:
        return self.stack.out_dim


INPUT_ENCODERS = {"atom": AtomEncoder}
"""The input encoders a ``[model]`` names (``input_encoder``)."""
