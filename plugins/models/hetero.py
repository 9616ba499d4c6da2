"""``[model] type = "hetero"``: any homogeneous model type run per relation (DGL
``HeteroGraphConv``), its outputs aggregated by destination type."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from graphflow.components import Model
from graphflow.errors import ConfigError
from graphflow.nn.hetero import HeteroConv
from graphflow.nn.typed import TypedAdjacency, TypedSchema
from graphflow.nn.typed_stack import TypedStack
from graphflow.options import option, parse_options
from graphflow_plugins.models.typed_options import TypedStackOptions


@dataclass
class HeteroOptions(TypedStackOptions):
    layer: str = option(
        "sage", 'The homogeneous [model] type run on each relation ("gcn", "sage", "gat", or '
                "one a plugin registers), one layer of it per relation and per layer.")
    layer_options: dict[str, Any] = option(
        {}, "Options of that model type (its hidden, layers and dropout are set by this "
            "model: one layer of it, no dropout of its own).")
    aggregate: Literal["sum", "mean", "max", "stack"] = option(
        "sum", "How the relations reaching one node type combine: sum, mean, max, or stack "
               "(side by side, then a Linear per node type back to the layer's width).")


class StackedCombine(nn.Module):
    """After a ``stack`` aggregation: each type's (n, R_t, F) to (n, F) by a Linear over the
    R_t * F stacked values."""

    def __init__(self, conv: HeteroConv, ntypes: list[str], fan_in: dict[str, int], dim: int):
        super().__init__()
        self.conv, self.ntypes = conv, ntypes
        self.lins = nn.ModuleList(nn.Linear(fan_in.get(t, 1) * dim, dim) for t in ntypes)

    def forward(self, adj: TypedAdjacency, x: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        out = self.conv(adj, x)  # per type (n, R_t, F)
        return {t: self.lins[self.ntypes.index(t)](h.flatten(1)) for t, h in out.items()}


class HeteroModel(Model):
    r"""Per-relation wrapper (DGL ``HeteroGraphConv``): a homogeneous model type, one layer of it
    for each relation, the outputs aggregated by destination type.

    .. math:: h_i' = \mathrm{AGG}_{r = (s, \cdot, t)}\ f^{(l)}_r(A_r, h_s)_i

    Any registered homogeneous model works unchanged (``layer = "gcn"``, ``"sage"``,
    ``"gat"``, or a plugin's): each relation gets its own module, built by that model type
    with ``layers = 1`` and ``layer_options``. Node types enter through the typed input layer
    (a Linear per featured type whose width differs, an embedding per featureless type).
    """

    name = "hetero"
    summary = "Any homogeneous model run per relation, aggregated by node type (typed graphs)"
    Options = HeteroOptions
    options: HeteroOptions
    typed = True

    def build(self, in_dim: int, out_dim: int) -> Any:
        raise ConfigError('model "hetero" needs a typed graph (several node types or '
                          f'relations); for a homogeneous graph use type = "{self.options.layer}"')

    def relation_model(self, registry: Any) -> Any:
        """The ``layer`` model component, with ``layer_options`` and one layer, no dropout."""
        o = self.options
        if registry is None:
            raise ConfigError('model "hetero" needs the plugin registry to find its layer')
        info = registry.get("model", o.layer, where="[model] layer")
        if getattr(info.cls, "typed", False):
            raise ConfigError(f'[model] layer = "{o.layer}" is itself a typed model; choose a '
                              f'homogeneous one such as "gcn", "sage" or "gat"')
        fields = {f.name for f in dataclasses.fields(info.cls.Options)}
        values = dict(o.layer_options)
        for name, value in (("layers", 1), ("dropout", 0.0), ("input_dropout", 0.0)):
            if name in fields and name not in values:
                values[name] = value
        if "hidden" in fields and isinstance(values.get("hidden"), list):
            raise ConfigError("[model] layer_options.hidden: each relation module is one layer; "
                              "set the widths with [model] hidden")
        options = parse_options(info.cls.Options, values, section="model.layer_options",
                                component=o.layer, source="pipeline", base_dir=Path.cwd())
        return info.cls(options)

    def build_typed(self, schema: TypedSchema, out_dim: int, registry: Any = None) -> TypedStack:
        o = self.options
        component = self.relation_model(registry)
        dims = o.dims(out_dim)
        fan_in = {t: sum(1 for r in schema.relations if r[2] == t) for t in schema.ntypes}
        layers: list[nn.Module] = []
        for i in range(len(dims) - 1):
            mods = {rel: component.build(dims[i], dims[i + 1]) for rel in schema.relations}
            conv = HeteroConv(mods, o.aggregate)
            layers.append(StackedCombine(conv, list(schema.ntypes), fan_in, dims[i + 1])
                          if o.aggregate == "stack" else conv)
        return TypedStack(o.typed_input(schema, dims[0]), layers, dims,
                          activation=o.activation, dropout=o.dropout)
