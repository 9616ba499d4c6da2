"""Options every model stack shares, and the widths they imply."""

from __future__ import annotations

from dataclasses import dataclass

from graphflow.nn.stack import Activation, Norm
from graphflow.options import option


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
        widths = self.hidden if isinstance(self.hidden, list) else [self.hidden]
        if not widths or any(w < 1 for w in widths):
            raise ValueError(f"hidden widths must be positive, got {self.hidden}")
        if self.layers is not None and self.layers < 1:
            raise ValueError(f"layers must be >= 1, got {self.layers}")
        if isinstance(self.hidden, list) and self.layers is not None \
                and self.layers != len(self.hidden) + 1:
            raise ValueError(
                f"hidden lists {len(self.hidden)} widths (one per hidden layer), so layers "
                f"must be {len(self.hidden) + 1}, not {self.layers}; drop layers or make "
                f"them agree")
        for name in ("dropout", "input_dropout"):
            p = getattr(self, name)
            if p is not None and not 0 <= p < 1:
                raise ValueError(f"{name} must lie in [0, 1), got {p}")

    @property
    def num_layers(self) -> int:
        if isinstance(self.hidden, list):
            return len(self.hidden) + 1
        return 2 if self.layers is None else self.layers

    def dims(self, in_dim: int, out_dim: int, hidden_scale: int = 1) -> list[int]:
        """The ``layers + 1`` widths: input, each hidden width (times ``hidden_scale``, e.g.
        concatenated attention heads), output."""
        n = self.num_layers
        hidden = self.hidden if isinstance(self.hidden, list) else [self.hidden] * (n - 1)
        return [in_dim, *(w * hidden_scale for w in hidden), out_dim]
