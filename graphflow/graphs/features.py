"""Features of graph collections that ship none: one-hot node or edge labels, one-hot degrees.

Both are what the GIN paper feeds its models (Xu et al., ICLR 2019, section 7): the
bioinformatics sets use their node labels one-hot; the social sets, which have no node
labels, use one-hot node degrees.
"""

from __future__ import annotations

import numpy as np
import torch

from graphflow.errors import DataError


def one_hot(codes: torch.Tensor, num: int | None = None) -> torch.Tensor:
    """float32 (N, C) with a 1 in column ``codes[i]`` of row ``i`` (C = ``max + 1`` unless
    given)."""
    codes = codes.long()
    c = int(codes.max()) + 1 if num is None and codes.numel() else int(num or 0)
    out = torch.zeros(codes.shape[0], max(c, 1), dtype=torch.float32)
    out[torch.arange(codes.shape[0]), codes] = 1.0
    return out


def label_codes(values: np.ndarray, *, where: str) -> tuple[torch.Tensor, int]:
    """Node or edge labels (any integers, e.g. 1-based atom or bond types) as codes
    ``0..K-1`` and ``K``.

    The codes follow the sorted distinct values, so the same file always gives the same
    columns.
    """
    values = np.asarray(values).reshape(len(values), -1)
    if values.shape[1] != 1:
        raise DataError(f"{where}: labels must be one column, got {values.shape[1]}")
    uniq, codes = np.unique(values[:, 0], return_inverse=True)
    return torch.from_numpy(codes.astype(np.int64).reshape(-1)), len(uniq)


def degree_one_hot(in_degrees: torch.Tensor, max_degree: int | None = None) -> torch.Tensor:
    """float32 (N, D + 1): one-hot in-degree, degrees above ``max_degree`` (D) in the last
    column (default D: the largest degree present)."""
    deg = in_degrees.long()
    cap = int(deg.max()) if max_degree is None and deg.numel() else int(max_degree or 0)
    return one_hot(deg.clamp(max=cap), cap + 1)
