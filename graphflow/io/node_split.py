"""Seeded, stratified train/val/test masks (the ``split`` transform and the ``synthetic`` loader).

Nodes are shuffled once with the seed, grouped by class (a stable sort keeps the shuffled order
inside each class), and the first ``n_train[c]`` of class ``c`` go to train, the next
``n_val[c]`` to val, the next ``n_test[c]`` to test. Everything is vectorised: one permutation,
one sort, one comparison per part.

Sizes are given per part as a fraction (float, of the labelled nodes, applied within each class)
or a total count (int, spread over the classes in proportion to their size). ``train_per_class``
takes a fixed number of training nodes from every class instead (the Planetoid protocol).
Nodes whose label is negative (unlabelled) get no mask.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


MASKS = ("train_mask", "val_mask", "test_mask")
"""The node data names of the three masks (bool (N,)), the one list of them in graphflow."""


@dataclass(frozen=True)
class SplitMasks:
    """Boolean (N,) masks."""

    train: torch.Tensor
    val: torch.Tensor
    test: torch.Tensor

    def as_ndata(self) -> dict[str, torch.Tensor]:
        return dict(zip(MASKS, (self.train, self.val, self.test)))


def check_sizes(train: float | int, val: float | int, test: float | int,
                train_per_class: int = 0) -> None:
    """Raise ``ValueError`` (with the option names) for impossible split sizes."""
    if train_per_class < 0:
        raise ValueError(f"train_per_class = {train_per_class}: must be >= 0")
    parts = {"val": val, "test": test}
    if train_per_class == 0:
        parts = {"train": train, **parts}
    for name, size in parts.items():
        if isinstance(size, float) and not 0.0 <= size <= 1.0:
            raise ValueError(f"{name} = {size}: a fraction must lie in [0, 1] (or give a count)")
        if isinstance(size, int) and size < 0:
            raise ValueError(f"{name} = {size}: a count must be >= 0")
    fractions = [s for s in parts.values() if isinstance(s, float)]
    if sum(fractions) > 1.0 + 1e-9:
        names = " + ".join(f"{k} ({v})" for k, v in parts.items() if isinstance(v, float))
        raise ValueError(f"fractions {names} add up to more than 1")


def _apportion(total: int, weights: torch.Tensor) -> torch.Tensor:
    """Split ``total`` into integer parts proportional to ``weights`` (largest remainder)."""
    if total <= 0 or weights.sum() == 0:
        return torch.zeros_like(weights)
    exact = weights.double() * total / weights.sum()
    base = exact.floor().long()
    short = total - int(base.sum())
    if short > 0:
        order = torch.argsort(exact - base, descending=True, stable=True)
        base[order[:short]] += 1
    return base


def _per_class(size: float | int, sizes: torch.Tensor) -> torch.Tensor:
    if isinstance(size, float):
        return (sizes.double() * size).round().long()
    return _apportion(size, sizes)


def stratified_split(labels: torch.Tensor | None, num_nodes: int, *, train: float | int,
                     val: float | int, test: float | int, seed: int,
                     train_per_class: int = 0) -> SplitMasks:
    """Seeded train/val/test masks, stratified by ``labels`` when given.

    :param labels: int64 (N,) class ids (negative = unlabelled), or None / multi-label
        (N, C) for a split that ignores classes.
    :param num_nodes: N.
    :param train: fraction (float) or total count (int) of training nodes.
    :param val: / :param test: the same for validation and test nodes.
    :param seed: the generator seed; the same seed gives the same masks.
    :param train_per_class: when > 0, this many training nodes from each class instead.
    :raises ValueError: when a class (or the graph) has too few nodes for the counts asked.
    """
    check_sizes(train, val, test, train_per_class)
    if labels is None or labels.dim() != 1:
        cls = torch.zeros(num_nodes, dtype=torch.int64)
    else:
        cls = labels.to(torch.int64)
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(num_nodes, generator=gen)
    labelled = perm[cls[perm] >= 0]  # shuffled labelled nodes
    c = cls[labelled]
    order = torch.argsort(c, stable=True)
    nodes = labelled[order]  # grouped by class, shuffled within
    c = c[order]
    num_classes = int(c.max()) + 1 if len(c) else 0
    sizes = torch.bincount(c, minlength=num_classes)
    starts = torch.cumsum(sizes, 0) - sizes
    rank = torch.arange(len(nodes)) - starts[c]  # position inside its class
    if train_per_class > 0:
        n_train = torch.full_like(sizes, train_per_class)
        rest = sizes - n_train
        if (rest < 0).any():
            small = int(torch.nonzero(rest < 0)[0])
            raise ValueError(f"train_per_class = {train_per_class}, but class {small} has only "
                             f"{int(sizes[small])} labelled nodes")
        n_val = _per_class(val, sizes) if isinstance(val, float) else _apportion(val, rest)
        n_test = _per_class(test, sizes) if isinstance(test, float) else _apportion(test, rest)
    else:
        n_train, n_val, n_test = (_per_class(s, sizes) for s in (train, val, test))
    counted = [int(n.sum()) for n, size in ((n_train, train if train_per_class == 0 else 0),
                                            (n_val, val), (n_test, test))
               if isinstance(size, int)]
    if sum(counted) > len(nodes):
        raise ValueError(f"the split asks for {sum(counted)} nodes but only {len(nodes)} "
                         f"labelled nodes are available")
    need = n_train + n_val + n_test
    over = need > sizes
    if over.any():
        # Rounding can ask for one node too many in a tiny class: take it from test, then val.
        excess = (need - sizes).clamp(min=0)
        cut = torch.minimum(excess, n_test)
        n_test, excess = n_test - cut, excess - cut
        cut = torch.minimum(excess, n_val)
        n_val, excess = n_val - cut, excess - cut
        if (excess > 0).any():
            total = int((n_train + n_val + n_test).sum())
            raise ValueError(f"the split asks for {total} nodes but only {len(nodes)} "
                             f"labelled nodes are available")
    t_end = n_train[c]
    v_end = t_end + n_val[c]
    e_end = v_end + n_test[c]
    masks = []
    for lo, hi in ((None, t_end), (t_end, v_end), (v_end, e_end)):
        chosen = rank < hi if lo is None else (rank >= lo) & (rank < hi)
        mask = torch.zeros(num_nodes, dtype=torch.bool)
        mask[nodes[chosen]] = True
        masks.append(mask)
    return SplitMasks(*masks)
