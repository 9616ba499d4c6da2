"""Options every model stack shares, and the widths they imply."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from torch import nn

from graphflow.nn.stack import Activation, Norm
from graphflow.options import option

InputEncoder = Literal["none", "atom"]


def input_encoder_option() -> Any:
    """The ``input_encoder`` option of a stack usable on molecules."""
    return option("none", 'The input layer: "none" (the features as they are) or "atom" '
                          "(OGB's AtomEncoder: a sum of one embedding per categorical atom "
                          'feature, from [load] type = "smiles"; its width is the first hidden '
                          "width).")


def virtual_node_option() -> Any:
    """The ``virtual_node`` option of a graph-level stack."""
    return option(False, "A virtual node per graph, joined to all its nodes: added to every "
                         "node before each layer and updated by an MLP of the graph's sum "
                         "(OGB's GNN + virtual node; graph tasks only, one hidden width).")


def with_input_encoder(kind: str, hidden: int | list[int], layers: int | None,
                       in_dim: int, out_dim: int,
                       stack: Callable[[int, int], nn.Module], *,
                       virtual_node: bool = False, dropout: float = 0.0) -> nn.Module:
    """``stack(in_dim, out_dim)``, or with ``kind = "atom"`` an :class:`~graphflow.graphs.
    encoders.AtomEncoder` of the first hidden width in front of ``stack(width, out_dim)``;
    with ``virtual_node``, the stack inside a :class:`~graphflow.graphs.virtual_node.
    VirtualNode` (its update's dropout ``dropout``)."""
    def build(i: int, o: int) -> nn.Module:
        if not virtual_node:
            return stack(i, o)
        from graphflow.graphs.virtual_node import VirtualNode

        return VirtualNode(stack(i, o), dropout)

    if kind == "none":
        return build(in_dim, out_dim)
    from graphflow.graphs.encoders import INPUT_ENCODERS, Encoded

    widths = hidden_widths(hidden, layers)
    width = widths[0] if widths else out_dim
    return Encoded(INPUT_ENCODERS[kind](width), build(width, out_dim))


def check_widths(hidden: int | list[int], layers: int | None) -> None:
    """``hidden`` (one width, or one per hidden layer) and ``layers`` of a stack agree and
    are positive, else a ``ValueError`` saying what to change."""
    widths = hidden if isinstance(hidden, list) else [hidden]
    if not widths or any(w < 1 for w in widths):
        raise ValueError(f"hidden widths must be positive, got {hidden}")
    if layers is not None and layers < 1:
        raise ValueError(f"layers must be >= 1, got {layers}")
    if isinstance(hidden, list) and layers is not None and layers != len(hidden) + 1:
        raise ValueError(
            f"hidden lists {len(hidden)} widths (one per hidden layer), so layers must be "
            f"{len(hidden) + 1}, not {layers}; drop layers or make them agree")


def num_layers(hidden: int | list[int], layers: int | None) -> int:
    """Message-passing layers: ``len(hidden) + 1`` for a list, else ``layers`` (default 2)."""
    if isinstance(hidden, list):
        return len(hidden) + 1
    return 2 if layers is None else layers


def hidden_widths(hidden: int | list[int], layers: int | None) -> list[int]:
    """The width of each hidden layer."""
    return hidden if isinstance(hidden, list) else [hidden] * (num_layers(hidden, layers) - 1)


@dataclass
class StackOptions:
    """``[model]`` options common to every layer stack."""

    hidden: int | list[int] = option(
        64, "Hidden width, or one width per hidden layer (then layers = len(hidden) + 1).")
    layers: int | None = option(
        None, "Number of message-passing layers (default: 2, or len(hidden) + 1).")
    dropout: float = option(0.5, "Dropout on the input of every layer.")
    input_dropout: float | None = option(
        None, "Dropout on the input features only (default: dropout).")
    activation: Activation = option("relu", "Activation after each hidden layer.")
    norm: Norm = option("none", "Normalisation after each hidden layer: none, batch or layer.")
    residual: bool = option(
        False, "Skip connection around each hidden layer (linear when widths differ).")

    def __post_init__(self) -> None:
        check_widths(self.hidden, self.layers)
        for name in ("dropout", "input_dropout"):
            p = getattr(self, name)
            if p is not None and not 0 <= p < 1:
                raise ValueError(f"{name} must lie in [0, 1), got {p}")

    @property
    def num_layers(self) -> int:
        return num_layers(self.hidden, self.layers)

    def dims(self, in_dim: int, out_dim: int, hidden_scale: int = 1) -> list[int]:
        """The ``layers + 1`` widths: input, each hidden width (times ``hidden_scale``, e.g.
        concatenated attention heads), output."""
        hidden = hidden_widths(self.hidden, self.layers)
        return [in_dim, *(w * hidden_scale for w in hidden), out_dim]
