r"""Portable twins of typed models (``[model] rgcn``, the ``hetero`` wrapper): one input per
node type and per relation.

A trained :class:`~graphflow.nn.typed_stack.TypedStack` becomes :class:`TypedGraphModel`,
called ``m(xs, rels)``:

* ``xs``: one tensor per node type, in the bundle's ``ntypes`` order: float32 features
  (n_t, F_t) of a featured type, int64 node ids (n_t,) of a featureless type (``0..n_t-1``,
  the positions of the training graph's nodes of that type: the model learnt a row for
  each);
* ``rels``: one ``(src, dst, weight)`` per canonical relation, in the bundle's
  ``relations`` order: ``src`` rows of the source type's input, ``dst`` rows of the
  destination type's, ``weight`` the edge values (ones unless the model was trained on
  edge values).

It returns the logits (n_target, C) of the target type's nodes. The ONNX graph takes the
same inputs flat (:class:`FlatTypedModel`): ``x_<type>`` for each node type, then
``src_<k>, dst_<k>, weight_<k>`` for relation ``k``.

Twins: :class:`~graphflow.nn.typed.TypedInput` (a Linear per projected type, a table per
featureless type), :class:`~graphflow.nn.rgcn.RGCNConv` (:math:`W_r` of any decomposition,
materialised), :class:`~graphflow.nn.rgcn.RGCNInputConv` (per-relation tables and weights),
:class:`~graphflow.nn.hetero.HeteroConv` (each relation's one-layer stack by the homogeneous
twin of its layer, with the ``prefixed`` input of :class:`~graphflow.nn.typed.TypedAdjacency`:
the destination type's rows, then the source type's) and the per-type ``stack`` combination.
"""

from __future__ import annotations

from typing import Any, List, Tuple

import torch
from torch import Tensor, nn

from graphflow.errors import ConfigError
from graphflow.nn.hetero import HeteroConv
from graphflow.nn.rgcn import RGCNConv, RGCNInputConv
from graphflow.nn.typed import TypedInput
from graphflow.nn.typed_stack import TypedStack
from graphflow.portable.graph import Edges, _check_ids, _edges, aggregate, edge_sum, gather

Rel = Tuple[Tensor, Tensor, Tensor]
EdgeTuple = Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]
"""An :class:`Edges` as a plain tuple (TorchScript takes lists of tuples, not of named
tuples defined under postponed annotations)."""


def as_edges(t: EdgeTuple) -> Edges:
    return Edges(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7])


def relation_edges(src: Tensor, dst: Tensor, weight: Tensor, src_rows: Tensor,
                   dst_rows: Tensor) -> Edges:
    """One relation's :class:`Edges` between two node types (no self-loops): degrees count
    the relation's edges, clamped to 1."""
    src, dst = src.to(torch.int64), dst.to(torch.int64)
    weight = weight.to(torch.float32)
    checked = True
    if not torch.jit.is_scripting():
        checked = not torch.onnx.is_in_onnx_export()
    if checked:
        _check_ids(src, src_rows.shape[0], "src")
        _check_ids(dst, dst_rows.shape[0], "dst")
    count = torch.ones_like(weight)  # (E,)
    in_deg = torch.zeros_like(dst_rows, dtype=torch.float32).scatter_add(0, dst, count)
    out_deg = torch.zeros_like(src_rows, dtype=torch.float32).scatter_add(0, src, count)
    return Edges(src, dst, weight, count, in_deg.clamp(min=1.0), out_deg.clamp(min=1.0),
                 dst_rows, torch.zeros(0, 0, dtype=torch.float32, device=weight.device))


def _zeros(rows: Tensor, width: int) -> Tensor:
    """float32 (n, width) zeros, n = ``rows``' length (a dynamic size in an ONNX graph)."""
    return torch.zeros_like(rows, dtype=torch.float32).unsqueeze(1) \
        * torch.zeros(1, width, dtype=torch.float32, device=rows.device)


def _values(g: Edges, mean: bool) -> Tensor:
    """Per-edge factors: the edge value, over the destination's degree for a mean."""
    return g.weight / gather(g.in_deg, g.dst) if mean else g.weight


def _frozen(t: Tensor) -> nn.Parameter:
    return nn.Parameter(t.detach().clone().float(), requires_grad=False)


# -- inputs -------------------------------------------------------------------------------

class Lookup(nn.Module):
    """A featureless type's learned table: int64 ids (n,) -> rows (n, D)."""

    def __init__(self, table: Tensor):
        super().__init__()
        self.table = _frozen(table)

    def forward(self, x: Tensor) -> Tensor:
        return gather(self.table, x.to(torch.int64))


class PortableTypedInput(nn.Module):
    """Twin of :class:`~graphflow.nn.typed.TypedInput` (or of no input layer: every type as
    given): one module per node type."""

    def __init__(self, mods: list[nn.Module]):
        super().__init__()
        self.mods = nn.ModuleList(mods)

    def forward(self, xs: List[Tensor]) -> List[Tensor]:
        out: List[Tensor] = []
        for i, mod in enumerate(self.mods):
            out.append(mod(xs[i]))
        return out


# -- R-GCN --------------------------------------------------------------------------------

class AggregateThen(nn.Module):
    """One relation of an R-GCN layer: the (mean or sum) aggregate of the source rows, times
    :math:`W_r`."""

    def __init__(self, weight: Tensor, mean: bool):
        super().__init__()
        self.weight = _frozen(weight)  # (F_in, F_out)
        self.mean = mean

    def forward(self, h: Tensor, g: Edges) -> Tensor:
        return aggregate(h, g, _values(g, self.mean)) @ self.weight  # (n_dst, F_out)


class TransformThen(nn.Module):
    """One relation of R-GCN's first layer on a featured type: :math:`x W_r`, aggregated."""

    def __init__(self, weight: Tensor, mean: bool):
        super().__init__()
        self.weight = _frozen(weight)  # (F_s, F_out)
        self.mean = mean

    def forward(self, h: Tensor, g: Edges) -> Tensor:
        return aggregate(h @ self.weight, g, _values(g, self.mean))


class TableRows(nn.Module):
    """One relation of R-GCN's first layer on a featureless type: each edge's message is the
    table row of its source node (one-hot input times :math:`W_r`)."""

    def __init__(self, table: Tensor, remap: Tensor | None, mean: bool):
        super().__init__()
        self.table = _frozen(table)  # (rows, F_out)
        self.has_remap = remap is not None
        self.register_buffer("remap", remap.clone() if remap is not None
                             else torch.zeros(0, dtype=torch.int64))
        self.mean = mean

    def forward(self, h: Tensor, g: Edges) -> Tensor:
        rows = gather(h.to(torch.int64), g.src)  # (E,) node ids of the sources
        if self.has_remap:
            rows = gather(self.remap, rows)
        messages = gather(self.table, rows) * _values(g, self.mean).unsqueeze(1)
        return edge_sum(messages, g)  # (n_dst, F_out)


class Linear(nn.Module):
    """``h @ W`` (a featured type's self-connection)."""

    def __init__(self, weight: Tensor):
        super().__init__()
        self.weight = _frozen(weight)

    def forward(self, h: Tensor) -> Tensor:
        return h @ self.weight


class NoLoop(nn.Module):
    """No self-connection: zeros of the layer's width."""

    def __init__(self, width: int):
        super().__init__()
        self.width = width

    def forward(self, h: Tensor) -> Tensor:
        return _zeros(h[:, 0] if h.dim() == 2 else h, self.width)


class PortableRelational(nn.Module):
    r"""Twin of an R-GCN layer: :math:`h_i' = \sum_r m_r(i) + \mathrm{loop}(h_i) + b` per node
    type, one message module per relation and one self-connection per type."""

    def __init__(self, messages: list[nn.Module], loops: list[nn.Module], bias: Tensor | None,
                 rel_index: list[int], rel_src: list[int], rel_dst: list[int], out_dim: int):
        super().__init__()
        self.messages = nn.ModuleList(messages)
        self.loops = nn.ModuleList(loops)
        self.rel_index: List[int] = list(rel_index)  # the model's relation of each message
        self.rel_src: List[int] = list(rel_src)
        self.rel_dst: List[int] = list(rel_dst)
        self.out_dim = out_dim
        self.has_bias = bias is not None
        self.bias = _frozen(bias if bias is not None else torch.zeros(out_dim))

    def forward(self, h: List[Tensor], graphs: List[EdgeTuple], rows: List[Tensor]
                ) -> List[Tensor]:
        out: List[Tensor] = []
        for t, loop in enumerate(self.loops):
            out.append(loop(h[t]))  # (n_t, F_out)
        for r, mod in enumerate(self.messages):
            d = self.rel_dst[r]
            out[d] = out[d] + mod(h[self.rel_src[r]], as_edges(graphs[self.rel_index[r]]))
        if self.has_bias:
            out = [o + self.bias for o in out]
        return out


def _rgcn(conv: RGCNConv, ntypes: list[str], relations: list[tuple],
          wanted: set[str]) -> PortableRelational:
    index = {t: i for i, t in enumerate(ntypes)}
    weights = conv.relation_weights().detach()  # (R, F_in, F_out)
    mean = conv.norm == "right"
    own = {tuple(r): i for i, r in enumerate(conv.relations)}
    messages, used, src, dst = [], [], [], []
    for k, rel in enumerate(relations):
        if rel not in own or rel[2] not in wanted:  # no path to the target's logits
            continue
        messages.append(AggregateThen(weights[own[rel]], mean))
        used.append(k)
        src.append(index[rel[0]])
        dst.append(index[rel[2]])
    loops = [Linear(conv.loop_weight.detach()) if conv.loop_weight is not None
             else NoLoop(conv.out_dim) for _ in ntypes]
    return PortableRelational(messages, loops, conv.bias, used, src, dst, conv.out_dim)


def _rgcn_input(conv: RGCNInputConv, ntypes: list[str], relations: list[tuple],
                wanted: set[str]) -> PortableRelational:
    index = {t: i for i, t in enumerate(ntypes)}
    mean = conv.norm == "right"
    own = {tuple(r): i for i, r in enumerate(conv.relations)}
    messages, used, src, dst = [], [], [], []
    for k, rel in enumerate(relations):
        if rel not in own or rel[2] not in wanted:  # no path to the target's logits
            continue
        i = own[rel]
        used.append(k)
        w = conv.rel_weights[i].detach()
        if conv.featureless[rel[0]]:
            messages.append(TableRows(w, conv.compact[i], mean))
        else:
            messages.append(TransformThen(w, mean))
        src.append(index[rel[0]])
        dst.append(index[rel[2]])
    loops: list[nn.Module] = []
    for t in ntypes:
        k = conv.ntypes.index(t)
        if conv.loop_weights is None:
            loops.append(NoLoop(conv.out_dim))
        elif conv.featureless[t]:
            loops.append(Lookup(conv.loop_weights[k].detach()))
        else:
            loops.append(Linear(conv.loop_weights[k].detach()))
    return PortableRelational(messages, loops, conv.bias, used, src, dst, conv.out_dim)


# -- the hetero wrapper -------------------------------------------------------------------

class HeteroRelation(nn.Module):
    """One relation of a :class:`~graphflow.nn.hetero.HeteroConv`: the twin of its one-layer
    stack on the relation's edges; between two types its input is the destination type's
    rows followed by the source type's (source ids shifted past them)."""

    def __init__(self, layer: nn.Module, post: nn.Module, self_loops: bool, cross: bool):
        super().__init__()
        self.layer, self.post = layer, post
        self.self_loops, self.cross = self_loops, cross

    def forward(self, h_src: Tensor, h_dst: Tensor, g: Edges, dst_rows: Tensor) -> Tensor:
        src = g.src
        x = h_src
        if self.cross:
            x = torch.cat([h_dst, h_src])  # (n_dst + n_src, F)
            src = src + dst_rows.shape[0]
        e = _edges(x, src, g.dst, g.weight, dst_rows, self.self_loops)
        return self.post(self.layer(x, e), gather(x, dst_rows))  # (n_dst, F')


class PortableHetero(nn.Module):
    """Twin of :class:`~graphflow.nn.hetero.HeteroConv` (with its ``stack`` combination when
    the model has one): per destination type, its relations' outputs combined by ``how``."""

    def __init__(self, mods: list[nn.Module], rel_index: list[int], rel_src: list[int],
                 rel_dst: list[int], num_types: int, how: str, lins: list[nn.Module] | None,
                 out_dim: int):
        super().__init__()
        self.mods = nn.ModuleList(mods)
        self.rel_index: List[int] = list(rel_index)
        self.rel_src: List[int] = list(rel_src)
        self.rel_dst: List[int] = list(rel_dst)
        self.num_types, self.how, self.out_dim = num_types, how, out_dim
        self.has_lins = lins is not None
        self.lins = nn.ModuleList(lins if lins is not None else [])

    def forward(self, h: List[Tensor], graphs: List[EdgeTuple], rows: List[Tensor]
                ) -> List[Tensor]:
        parts: List[List[Tensor]] = []
        for _ in range(self.num_types):
            none: List[Tensor] = []
            parts.append(none)
        for r, mod in enumerate(self.mods):
            s, d = self.rel_src[r], self.rel_dst[r]
            parts[d].append(mod(h[s], h[d], as_edges(graphs[self.rel_index[r]]), rows[d]))
        out: List[Tensor] = []
        for t in range(self.num_types):
            out.append(self._combine(parts[t], rows[t]))
        if self.has_lins:
            for t, lin in enumerate(self.lins):
                if len(parts[t]) > 0:
                    out[t] = lin(out[t])
        return out

    def _combine(self, parts: List[Tensor], rows: Tensor) -> Tensor:
        if len(parts) == 0:
            return _zeros(rows, self.out_dim)  # a type no relation reaches (left unused)
        if len(parts) == 1 and self.how != "stack":
            return parts[0]
        if self.how == "sum":
            out = parts[0]
            for p in parts[1:]:
                out = out + p
            return out
        stacked = torch.stack(parts, 1)  # (n, R_t, F)
        if self.how == "stack":
            return stacked.flatten(1)
        if self.how == "mean":
            return stacked.mean(1)
        if self.how == "max":
            return stacked.max(1)[0]
        return stacked.min(1)[0]


def _hetero(conv: nn.Module, ntypes: list[str], relations: list[tuple], present: set[str],
            wanted: set[str], name: str) -> tuple[PortableHetero, set[str]]:
    from graphflow.nn.stack import GNNStack
    from graphflow.portable.convert import Unsupported, portable_model

    lins = None
    if isinstance(conv, HeteroConv):
        hetero = conv
    else:  # the hetero model's StackedCombine: a HeteroConv, then a Linear per type
        from graphflow.portable.convert import plain_module

        hetero = conv.conv
        lins = [plain_module(lin, f"{name}.lins.{i}") for i, lin in enumerate(conv.lins)]
        if list(conv.ntypes) != list(ntypes):
            raise Unsupported(f"{name}: its node types differ from the model's")
    index = {t: i for i, t in enumerate(ntypes)}
    own = {tuple(r): i for i, r in enumerate(hetero.relations)}
    mods, used, src, dst, reached = [], [], [], [], set()
    for k, rel in enumerate(relations):
        s, _, d = rel
        # HeteroConv skips a relation whose source (or, between two types, destination) has
        # no input rows: the types the previous layer left out
        if rel not in own or s not in present or (s != d and d not in present):
            continue
        reached.add(d)
        if d not in wanted:  # no path to the target's logits
            continue
        mod = hetero.mods[own[rel]]
        if not isinstance(mod, GNNStack) or mod.num_layers != 1:
            raise Unsupported(f"{name}.mods.{own[rel]} ({type(mod).__name__}) is not a "
                              f"one-layer graphflow stack, which the hetero twin needs")
        twin = portable_model(mod, "block")
        mods.append(HeteroRelation(twin.layers[0], twin.posts[0], bool(mod.self_loops),
                                   s != d))
        used.append(k)
        src.append(index[s])
        dst.append(index[d])
    out_dim = _out_width(hetero)
    if lins is not None:
        lins = [lin if t in reached else nn.Identity() for t, lin in zip(ntypes, lins)]
    return PortableHetero(mods, used, src, dst, len(ntypes), hetero.aggregate, lins,
                          out_dim), reached


def _out_width(conv: HeteroConv) -> int:
    for mod in conv.mods:
        return int(mod.dims[-1])
    return 0


# -- the model ----------------------------------------------------------------------------

class TypedGraphModel(nn.Module):
    """The whole typed graph in, the target type's logits out:
    ``(xs, [(src, dst, weight), ...]) -> (n_target, C)`` (see the module docstring)."""

    def __init__(self, input: PortableTypedInput, layers: list[nn.Module], act: nn.Module,
                 rel_src: list[int], rel_dst: list[int], target: int,
                 ntypes: list[str], relations: list[tuple], featureless: list[bool]):
        super().__init__()
        self.input = input
        self.layers = nn.ModuleList(layers)
        self.act = act
        self.rel_src: List[int] = list(rel_src)
        self.rel_dst: List[int] = list(rel_dst)
        self.target = target
        self.num_types = len(ntypes)
        self.num_relations = len(relations)
        self.ntypes: List[str] = list(ntypes)
        self.relations = [tuple(r) for r in relations]  # not scripted: for the sidecar
        self.featureless: List[bool] = list(featureless)
        self.self_loops = False  # loops are relations here (the sidecar's field)

    def forward(self, xs: List[Tensor], rels: List[Rel]) -> Tensor:
        if len(xs) != self.num_types or len(rels) != self.num_relations:
            raise ValueError("the model takes one input per node type (" + str(self.num_types)
                             + ") and one (src, dst, weight) per relation ("
                             + str(self.num_relations) + "), got " + str(len(xs)) + " and "
                             + str(len(rels)))
        rows: List[Tensor] = []
        for x in xs:
            rows.append(torch.arange(x.shape[0], dtype=torch.int64, device=x.device))
        graphs: List[EdgeTuple] = []
        for r in range(self.num_relations):
            src, dst, weight = rels[r]
            graphs.append(relation_edges(src, dst, weight, rows[self.rel_src[r]],
                                         rows[self.rel_dst[r]]))
        h = self.input(xs)
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            h = layer(h, graphs, rows)
            if i < last:
                h = [self.act(v) for v in h]
        return h[self.target]


class FlatTypedModel(nn.Module):
    """:class:`TypedGraphModel` with flat inputs ``(x_<type>..., src_0, dst_0, weight_0,
    src_1, ...)``, the form an ONNX graph takes."""

    def __init__(self, model: TypedGraphModel):
        super().__init__()
        self.model = model

    def forward(self, *flat: Tensor) -> Tensor:
        n = self.model.num_types
        rels = [(flat[i], flat[i + 1], flat[i + 2]) for i in range(n, len(flat), 3)]
        return self.model(list(flat[:n]), rels)


def is_typed_model(model: nn.Module) -> bool:
    """Whether ``model`` is a typed layer stack (per-type inputs)."""
    return isinstance(model, TypedStack)


def typed_model(model: TypedStack, target: str | None) -> TypedGraphModel:
    """The eval-mode twin of a trained typed stack, returning ``target``'s logits.

    :raises Unsupported: a layer without a typed twin, or no target type.
    """
    from graphflow.portable.convert import Unsupported, plain_module

    first = model.layers[0] if len(model.layers) else None
    if isinstance(first, RGCNInputConv):
        ntypes, relations = list(first.ntypes), [tuple(r) for r in first.relations]
        featureless = [bool(first.featureless[t]) for t in ntypes]
    elif isinstance(model.input, TypedInput):
        ntypes, relations, featureless = _schema_of(model)
    else:
        raise Unsupported("the typed model has no input layer the portable form knows "
                          "(TypedInput, or R-GCN's one-hot first layer)")
    if target is None or target not in ntypes:
        raise ConfigError(f"the typed model's target node type {target!r} is not one of its "
                          f"node types ({', '.join(ntypes)}); export the model of a "
                          f"node_classification stage (model_info node_type)")
    index = {t: i for i, t in enumerate(ntypes)}
    if model.input is None:
        inputs = PortableTypedInput([nn.Identity() for _ in ntypes])
    else:
        mods: list[nn.Module] = []
        for t in ntypes:
            if t in model.input.emb:
                mods.append(Lookup(model.input.emb[t].weight.detach()))
            elif t in model.input.proj:
                mods.append(plain_module(model.input.proj[t], f"input.proj.{t}"))
            else:
                mods.append(nn.Identity())
        inputs = PortableTypedInput(mods)
    # the types whose output of each layer the target's logits depend on, last layer first
    wanted = [{target}]
    for _ in range(len(model.layers) - 1):
        wanted.insert(0, wanted[0] | {r[0] for r in relations if r[2] in wanted[0]})
    present = set(ntypes)
    layers: list[nn.Module] = []
    for i, layer in enumerate(model.layers):
        if isinstance(layer, RGCNInputConv):
            layers.append(_rgcn_input(layer, ntypes, relations, wanted[i]))
        elif isinstance(layer, RGCNConv):
            layers.append(_rgcn(layer, ntypes, relations, wanted[i]))
        elif isinstance(layer, HeteroConv) or isinstance(getattr(layer, "conv", None),
                                                         HeteroConv):
            twin, present = _hetero(layer, ntypes, relations, present, wanted[i],
                                    f"layers.{i}")
            layers.append(twin)
        else:
            raise Unsupported(f"layers.{i} ({type(layer).__name__}, from package "
                              f"{type(layer).__module__.split('.')[0]}) has no typed portable "
                              f"twin (R-GCN and the hetero wrapper have)")
    if target not in present:
        raise Unsupported(f"no relation of the model reaches the target type {target!r}")
    act = plain_module(model.act, "act")
    return TypedGraphModel(inputs, layers, act, [index[r[0]] for r in relations],
                           [index[r[2]] for r in relations], index[target], ntypes, relations,
                           featureless).eval()


def _schema_of(model: TypedStack) -> tuple[list[str], list[tuple], list[bool]]:
    """Node types, relations and featureless flags of a typed stack with a TypedInput."""
    first = model.layers[0]
    conv = first if isinstance(first, (RGCNConv, HeteroConv)) else getattr(first, "conv", None)
    relations = [tuple(r) for r in getattr(conv, "relations", [])]
    ntypes = list(getattr(first, "ntypes", []))  # the stack combination keeps the order
    if not ntypes:  # DGL's order: node types sorted by name
        ntypes = sorted({t for s, _, d in relations for t in (s, d)}
                        | set(model.input.emb) | set(model.input.proj))
    return ntypes, relations, [t in model.input.emb for t in ntypes]


# -- signature ----------------------------------------------------------------------------

def input_names(twin: TypedGraphModel) -> list[str]:
    """``x_<type>`` for each node type, then ``src_<k>, dst_<k>, weight_<k>`` per relation."""
    return [f"x_{t}" for t in twin.ntypes] + [f"{f}_{k}" for k in range(twin.num_relations)
                                              for f in ("src", "dst", "weight")]


def dynamic_axes(twin: TypedGraphModel) -> dict[str, dict[int, str]]:
    axes: dict[str, dict[int, str]] = {f"x_{t}": {0: f"N_{k}"}
                                       for k, t in enumerate(twin.ntypes)}
    for k in range(twin.num_relations):
        for f in ("src", "dst", "weight"):
            axes[f"{f}_{k}"] = {0: f"E_{k}"}
    axes["logits"] = {0: f"N_{twin.target}"}
    return axes


def example_inputs(twin: TypedGraphModel, in_dims: dict[str, int | None],
                   seed: int = 0) -> tuple[Tensor, ...]:
    """A small graph to trace with: 5 nodes of each featured type; of a featureless type a
    few node ids its learned tables have rows for; 6 edges per relation, whose sources have a
    row in the relation's table."""
    gen = torch.Generator().manual_seed(seed)
    remaps = _remaps(twin)  # relation -> node id -> table row (-1: none)
    xs: list[Tensor] = []
    for k, (t, featureless) in enumerate(zip(twin.ntypes, twin.featureless)):
        if not featureless:
            xs.append(torch.randn(5, int(in_dims[t] or 1), generator=gen))
            continue
        rows = _table_rows(twin, t)
        picked = [torch.arange(min(rows, 4))]
        for r, remap in remaps.items():
            if twin.rel_src[r] == k:
                picked.append((remap >= 0).nonzero().squeeze(1)[:2])
        xs.append(torch.unique(torch.cat(picked)))  # (n_t,) node ids, sorted
    flat: list[Tensor] = list(xs)
    for r in range(twin.num_relations):
        s, d = twin.rel_src[r], twin.rel_dst[r]
        allowed = torch.arange(xs[s].shape[0])
        if r in remaps:  # rows of x_s whose node has a row in the relation's table
            allowed = (remaps[r][xs[s]] >= 0).nonzero().squeeze(1)
        if allowed.numel() == 0:
            allowed = torch.zeros(1, dtype=torch.int64)
        pick = torch.randint(0, allowed.shape[0], (6,), generator=gen)
        flat += [allowed[pick], torch.randint(0, xs[d].shape[0], (6,), generator=gen),
                 torch.rand(6, generator=gen) + 0.5]
    return tuple(flat)


def _remaps(twin: TypedGraphModel) -> dict[int, Tensor]:
    """Per relation with a compacted table (R-GCN's one-hot layer): node id -> table row."""
    out: dict[int, Tensor] = {}
    for layer in twin.layers:
        if isinstance(layer, PortableRelational):
            for r, mod in enumerate(layer.messages):
                if isinstance(mod, TableRows) and mod.has_remap:
                    out[layer.rel_index[r]] = mod.remap
    return out


def _table_rows(twin: TypedGraphModel, ntype: str) -> int:
    """Nodes of a featureless type (its learned tables' rows)."""
    k = twin.ntypes.index(ntype)
    for m in twin.input.mods[k].modules():
        if isinstance(m, Lookup):
            return int(m.table.shape[0])
    for layer in twin.layers:
        if isinstance(layer, PortableRelational):
            loop = layer.loops[k]
            if isinstance(loop, Lookup):
                return int(loop.table.shape[0])
            for r, mod in enumerate(layer.messages):
                if layer.rel_src[r] == k and isinstance(mod, TableRows):
                    return int(mod.remap.shape[0]) if mod.has_remap else int(mod.table.shape[0])
    return 5


def sidecar(twin: TypedGraphModel, fmt: str, file: str, in_dims: dict[str, int | None],
            out_dim: int, model_info: dict[str, Any] | None,
            extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON beside a typed model's exported file."""
    from graphflow.io.plain import plain

    types = []
    inputs = []
    for k, t in enumerate(twin.ntypes):
        if twin.featureless[k]:
            spec = {"name": f"x_{t}", "dtype": "int64", "shape": [f"N_{k}"]}
        else:
            spec = {"name": f"x_{t}", "dtype": "float32", "shape": [f"N_{k}", in_dims[t]]}
        inputs.append(spec)
        types.append({"type": t, "input": f"x_{t}", "featureless": twin.featureless[k]})
    relations = []
    for k, (s, r, d) in enumerate(twin.relations):
        names = [f"src_{k}", f"dst_{k}", f"weight_{k}"]
        inputs += [{"name": names[0], "dtype": "int64", "shape": [f"E_{k}"]},
                   {"name": names[1], "dtype": "int64", "shape": [f"E_{k}"]},
                   {"name": names[2], "dtype": "float32", "shape": [f"E_{k}"]}]
        relations.append({"relation": [s, r, d], "inputs": names})
    target = twin.ntypes[twin.target]
    return {"format": fmt, "file": file, "inputs_form": "typed",
            "node_types": types, "relations": relations, "target": target,
            "inputs": inputs,
            "outputs": [{"name": "logits", "dtype": "float32",
                         "shape": [f"N_{twin.target}", out_dim]}],
            "self_loops_added_inside": False,
            "preprocessing": TYPED_PREPROCESSING,
            "model_info": plain(model_info or {}), **(extra or {})}


TYPED_PREPROCESSING = (
    "Pass the whole typed graph: one input per node type (x_<type>), then src, dst and "
    "weight for each relation k (the relations list gives their canonical (source type, "
    "relation, destination type)). x_<type> holds the type's features after the pipeline's "
    "transforms (dense float32), or, for a featureless type, the int64 positions 0..n-1 of "
    "its nodes in the training graph (the bundle's ids-<k>.parquet order): the model learnt "
    "a row for each. src_k holds rows of the source type's input, dst_k rows of the "
    "destination type's, one entry per edge as the training graph held them (reverse "
    "relations are relations of their own). weight_k holds the edge values: ones, unless "
    "the model was trained on edge weights. Degrees (per relation) are computed inside. The "
    "output is the logits of the target type's nodes, in the order of its input.")


def in_dims_of(model: TypedStack, twin: TypedGraphModel) -> dict[str, int | None]:
    """Input width of each node type of a trained typed stack (None: featureless)."""
    dims: dict[str, int | None] = {}
    first = model.layers[0]
    for k, t in enumerate(twin.ntypes):
        if twin.featureless[k]:
            dims[t] = None
        elif isinstance(first, RGCNInputConv):
            i = first.ntypes.index(t)
            if first.loop_weights is not None:
                dims[t] = int(first.loop_weights[i].shape[0])
            else:
                r = next(j for j, rel in enumerate(first.relations) if rel[0] == t)
                dims[t] = int(first.rel_weights[r].shape[0])
        elif t in model.input.proj:
            dims[t] = int(model.input.proj[t].in_features)
        else:
            dims[t] = int(model.input.dim)
    return dims


def export_inputs(twin: TypedGraphModel, kept: list[str] | None = None) -> list[str]:
    """The input names of an exported typed model (``kept``: those the ONNX graph kept)."""
    names = input_names(twin)
    return names if kept is None else [n for n in names if n in set(kept)]
