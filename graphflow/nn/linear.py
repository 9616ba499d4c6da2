"""``nn.Linear`` whose product goes through graphflow's dense dispatch point.

The same module as torch's (parameters ``weight`` (F_out, F_in) and ``bias`` (F_out,), the
same initialisation and state dict), but a 2-D input's ``x @ W^T + b`` runs through
:func:`graphflow.sparse.gemm.linear`: oneDNN on the CPU where that is faster
(docs/cores.md), torch otherwise. For the MLPs inside models (GIN, link decoders).
:class:`LazyLinear` is its lazy form.
"""

from __future__ import annotations

import torch
from torch import nn

from graphflow.sparse import gemm


class Linear(nn.Linear):
    """:class:`torch.nn.Linear` with its 2-D products dispatched by
    :mod:`graphflow.sparse.gemm`; (*, F_in) -> (*, F_out)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 2:
            return super().forward(x)
        return gemm.linear(x, self.weight, self.bias)


class LazyLinear(nn.LazyLinear):
    """:class:`torch.nn.LazyLinear` (``in_features`` read from the first input) that becomes
    graphflow's :class:`Linear` once its parameters exist, so its products go through the
    same dispatch point. For maps whose input width is the data's (GINE's edge maps)."""

    cls_to_become = Linear  # type: ignore[assignment]
