"""Options every typed (heterogeneous) model shares, and its input layer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from graphflow.nn.stack import Activation
from graphflow.nn.typed import TypedInput, TypedSchema
from graphflow.options import option


@dataclass
class TypedStackOptions:
    """``[model]`` options common to the typed model stacks."""

    hidden: int | list[int] = option(
        16, "Hidden width, or one width per hidden layer (then layers = len(hidden) + 1).")
    layers: int | None = option(
        None, "Number of message-passing layers (default: 2, or len(hidden) + 1).")
    dropout: float = option(0.0, "Dropout on the input of every layer.")
    activation: Activation = option("relu", "Activation after each hidden layer.")
    embed_dim: int | None = option(
        None, "Width every node type enters with: featured types are projected to it when "
              "their widths differ, featureless types get a learned embedding of it "
              "(default: the first hidden width).")
    project: Literal["auto", "all", "none"] = option(
        "auto", "Per-type input projection: auto (a Linear for each featured type whose width "
                "differs from embed_dim), all, or none (every type must then have embed_dim "
                "features).")
    sparse_embeddings: bool = option(
        False, "Embeddings of featureless types with sparse gradients (only looked-up rows; "
               'needs optimizer = "sgd").')

    def __post_init__(self) -> None:
        widths = self.hidden if isinstance(self.hidden, list) else [self.hidden]
        if not widths or any(w < 1 for w in widths):
            raise ValueError(f"hidden widths must be positive, got {self.hidden}")
        if self.layers is not None and self.layers < 1:
            raise ValueError(f"layers must be >= 1, got {self.layers}")
        if isinstance(self.hidden, list) and self.layers is not None \
                and self.layers != len(self.hidden) + 1:
            raise ValueError(f"hidden lists {len(self.hidden)} widths, so layers must be "
                             f"{len(self.hidden) + 1}, not {self.layers}; drop layers")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must lie in [0, 1), got {self.dropout}")
        if self.embed_dim is not None and self.embed_dim < 1:
            raise ValueError(f"embed_dim must be >= 1, got {self.embed_dim}")

    @property
    def num_layers(self) -> int:
        if isinstance(self.hidden, list):
            return len(self.hidden) + 1
        return 2 if self.layers is None else self.layers

    def dims(self, out_dim: int) -> list[int]:
        """The ``layers + 1`` widths: the input width, each hidden width, the output."""
        n = self.num_layers
        hidden = self.hidden if isinstance(self.hidden, list) else [self.hidden] * (n - 1)
        first = self.embed_dim or (hidden[0] if hidden else out_dim)
        return [first, *hidden, out_dim]

    def typed_input(self, schema: TypedSchema, dim: int) -> TypedInput:
        return TypedInput(schema, dim, project=self.project, sparse=self.sparse_embeddings)
