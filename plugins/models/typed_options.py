"""Options every typed (heterogeneous) model shares, and its input layer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from graphflow.nn.stack import Activation
from graphflow.nn.typed import TypedInput, TypedSchema
from graphflow.options import option
from graphflow_plugins.models.options import check_widths, hidden_widths, num_layers


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
        check_widths(self.hidden, self.layers)
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must lie in [0, 1), got {self.dropout}")
        if self.embed_dim is not None and self.embed_dim < 1:
            raise ValueError(f"embed_dim must be >= 1, got {self.embed_dim}")

    @property
    def num_layers(self) -> int:
        return num_layers(self.hidden, self.layers)

    def dims(self, out_dim: int) -> list[int]:
        """The ``layers + 1`` widths: the input width, each hidden width, the output."""
        hidden = hidden_widths(self.hidden, self.layers)
        first = self.embed_dim or (hidden[0] if hidden else out_dim)
        return [first, *hidden, out_dim]

    def typed_input(self, schema: TypedSchema, dim: int) -> TypedInput:
        return TypedInput(schema, dim, project=self.project, sparse=self.sparse_embeddings)
