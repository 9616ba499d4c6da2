"""``[model] type = "rgcn"``: relational graph convolutions (Schlichtkrull et al., ESWC 2018)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from graphflow.components import Model
from graphflow.errors import ConfigError
from graphflow.nn.rgcn import RGCNConv, RGCNInputConv
from graphflow.nn.typed import TypedSchema
from graphflow.nn.typed_stack import TypedStack
from graphflow.options import option
from graphflow_plugins.models.typed_options import TypedStackOptions


@dataclass
class RGCNOptions(TypedStackOptions):
    regularizer: Literal["basis", "bdd", "none"] = option(
        "basis", "Relation weight decomposition: basis (shared bases), bdd (block-diagonal; "
                 "the output layer uses basis when the class count is not a multiple of "
                 "num_bases) or none (one full matrix per relation).")
    num_bases: int = option(
        0, "Bases (basis) or diagonal blocks (bdd); 0: one per relation.")
    self_loop: bool = option(True, "Learn a self-connection weight W_0.")
    bias: bool = option(True, "Learn a bias in each layer.")
    rgcn_norm: Literal["right", "none"] = option(
        "right", "right: mean over each node's in-neighbours per relation (the paper's "
                 "1/c_{i,r}); none: sum.")

    onehot_input: bool = option(
        False, "The paper's first layer on raw inputs: featureless node types as one-hot "
               "vectors (a learned row per node and relation) and featured types through "
               "per-relation weights, instead of an input embedding or projection; that layer "
               "has no decomposition.")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_bases < 0:
            raise ValueError(f"num_bases must be >= 0, got {self.num_bases}")


class RGCNModel(Model):
    r"""Relational graph convolutional network (Schlichtkrull et al., ESWC 2018).

    Each layer computes, per node :math:`i` and with relations :math:`r = (s, \cdot, t)`,
    :math:`\sigma(\sum_r \frac{1}{c_{i,r}} \sum_{j \in N^r(i)} h_j W_r + h_i W_0 + b)` (DGL
    ``RelGraphConv``), with :math:`W_r` decomposed by ``regularizer``. Node types enter
    through a typed input layer: a Linear per featured type whose width differs from
    ``embed_dim``, a learned embedding per featureless type. Needs a typed graph (several
    node types or relations). The paper's AIFB setting (``examples/aifb_rgcn.toml``): 2
    layers, hidden 16, ``regularizer = "none"``, ``onehot_input = true``, no dropout, with
    ``[train] lr = 0.01, weight_decay = 0, epochs = 50``.
    """

    name = "rgcn"
    summary = "Relational GCN with basis / block-diagonal weights (typed graphs)"
    Options = RGCNOptions
    options: RGCNOptions
    typed = True

    def build(self, in_dim: int, out_dim: int) -> Any:
        raise ConfigError('model "rgcn" needs a typed graph (several node types or relations); '
                          'for a homogeneous graph use type = "gcn"')

    def build_typed(self, schema: TypedSchema, out_dim: int, registry: Any = None) -> TypedStack:
        """A :class:`TypedStack` of :class:`RGCNConv` layers for ``schema``."""
        o = self.options
        dims = o.dims(out_dim)
        bases = o.num_bases or len(schema.relations)
        layers: list = []
        if o.onehot_input:
            layers.append(RGCNInputConv(schema, dims[1], norm=o.rgcn_norm,
                                        self_loop=o.self_loop, bias=o.bias))
        for i in range(1 if o.onehot_input else 0, len(dims) - 1):
            regularizer = o.regularizer
            if regularizer == "bdd" and i == len(dims) - 2 and dims[i + 1] % bases:
                regularizer = "basis"  # blocks cannot split the class scores
            layers.append(RGCNConv(dims[i], dims[i + 1], schema.relations,
                                   regularizer=regularizer, num_bases=o.num_bases or None,
                                   norm=o.rgcn_norm, self_loop=o.self_loop, bias=o.bias))
        first = None if o.onehot_input else o.typed_input(schema, dims[0])
        return TypedStack(first, layers, dims,
                          activation=o.activation, dropout=o.dropout)
