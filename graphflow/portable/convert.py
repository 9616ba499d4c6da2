"""Build the portable twin of a trained graphflow model: :func:`portable_model`.

The trained model is a :class:`graphflow.nn.stack.GNNStack`. Each of its layers is replaced by
its twin from :mod:`graphflow.portable.layers` (the parameters are copied), each norm,
activation and skip connection by a copy of the torch module, and the stack by
:class:`~graphflow.portable.stack.FullGraphModel` or :class:`~graphflow.portable.stack.BlockModel`.
A graph-level model (:class:`graphflow.graphs.model.GraphModel` around such a stack) becomes
:class:`~graphflow.portable.readout.GraphLevelModel`: the stack's twin, its readouts and head;
a link prediction model (:class:`graphflow.linkpred.decoders.LinkModel`)
:class:`~graphflow.portable.pairs.LinkLevelModel`: the stack's twin and its pair decoder.

Layers of other packages take part in two ways: :func:`register_twin` (a function from the
trained layer to its twin), or a ``portable_twin(inputs)`` method on the layer itself. A twin
takes ``forward(h, g)`` (see :mod:`graphflow.portable.layers`). A model with a part that has
no twin raises one :class:`~graphflow.errors.ConfigError` naming the part and what would work.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Literal

import torch
from torch import nn

from graphflow.errors import ConfigError
from graphflow.graphs.model import GraphModel
from graphflow.linkpred.decoders import BilinearDecoder, DotDecoder, LinkModel, MLPDecoder
from graphflow.nn.gat import GATConv
from graphflow.nn.gcn import GCNConv
from graphflow.nn.gin import GINConv
from graphflow.nn.gine import GINEConv
from graphflow.nn.sage import SAGEConv
from graphflow.nn.sgc import SGConv
from graphflow.nn.stack import GNNStack
from graphflow.portable.layers import (PortableGAT, PortableGCN, PortableGIN, PortableGINE,
                                       PortableSAGE, PortableSGC)
from graphflow.portable.pairs import (LinkLevelModel, PortableBilinear, PortableDot,
                                      PortableMLPDecoder)
from graphflow.portable.readout import (EdgeGraphLevelModel, GraphLevelModel, PortableReadout,
                                        PortableSet2Set)
from graphflow.portable.stack import BlockModel, FullGraphModel, Post

Inputs = Literal["full", "block"]
INPUTS: tuple[str, ...] = ("full", "block")
Twin = Callable[[nn.Module, str, str], nn.Module]
"""``make(layer, name, inputs) -> twin``; ``name`` is the layer's path in the model (for
errors) and ``inputs`` ``"full"`` or ``"block"``."""

FALLBACK = 'use [[export]] type = "pt", what = "model" (graphflow\'s own format) instead'

_TWINS: dict[type, Twin] = {}


def register_twin(layer_cls: type, make: Twin) -> None:
    """Make layers of ``layer_cls`` (and its subclasses) exportable: ``make(layer, name,
    inputs)`` returns the twin of a trained ``layer``."""
    _TWINS[layer_cls] = make


class Unsupported(ConfigError):
    """A part of the model has no portable form for the export asked for."""


Portable = FullGraphModel | BlockModel | GraphLevelModel | LinkLevelModel


def portable_model(model: nn.Module, inputs: Inputs = "full", *,
                   edge_features: bool = False) -> Portable:
    """The eval-mode twin of a trained :class:`~graphflow.nn.stack.GNNStack`, or of a
    graph-level :class:`~graphflow.graphs.model.GraphModel` around one.

    :param inputs: ``"full"`` (:class:`FullGraphModel`; :class:`GraphLevelModel` for a graph
        model, :class:`LinkLevelModel` for a link model) or ``"block"`` (:class:`BlockModel`;
        node-level stacks only).
    :param edge_features: internal: the stack's twin may read edge features (``gine``), as
        under a graph task's read-out, whose export takes them (``edge_feat``).
    :raises Unsupported: a part has no portable twin (the message names it and what works).
    """
    if inputs not in INPUTS:
        raise ConfigError(f'inputs must be "full" or "block", got "{inputs}"')
    if isinstance(model, GraphModel):
        return _graph_level(model, inputs)
    if isinstance(model, LinkModel):
        return _link_level(model, inputs)
    if not isinstance(model, GNNStack):
        raise Unsupported(f"{_describe(model, 'the model')} has no portable form: only the "
                          f"layer stacks of [model] gcn, sage, gat, gin and sgc "
                          f"(graphflow.nn.stack.GNNStack, as node_classification trains "
                          f"them), alone, under a graph task's readout or with a link "
                          f"decoder, export; {FALLBACK}")
    layers = [_twin(layer, f"layers.{i}", inputs)
              for i, layer in enumerate(model.layers)]
    reads_edges = [i for i, t in enumerate(layers) if isinstance(t, PortableGINE)]
    if reads_edges and not edge_features:
        i = reads_edges[0]
        raise Unsupported(f"{_describe(model.layers[i], f'layers.{i}')} reads edge features, "
                          f"which the portable inputs of a node-level stack do not carry (a "
                          f"graph task's export does: edge_feat); {FALLBACK}")
    last = model.num_layers - 1
    posts = []
    for i in range(model.num_layers):
        if i == last:
            posts.append(Post(None, nn.Identity(), nn.Identity()))
            continue
        skip = plain_module(model.skips[i], f"skips.{i}") if model.residual else None
        posts.append(Post(skip, plain_module(model.norms[i], f"norms.{i}"),
                          plain_module(model.acts[i], f"acts.{i}")))
    cls = FullGraphModel if inputs == "full" else BlockModel
    return cls(layers, posts, bool(model.self_loops)).eval()


def _encoder(model: nn.Module, inputs: str, what: str) -> GNNStack:
    """The layer stack under a graph or link model, which exports with whole graphs only."""
    if inputs != "full":
        raise Unsupported(f'a {what} model takes whole graphs: export it with inputs = "full"')
    encoder = model.encoder
    if not isinstance(encoder, GNNStack):
        raise Unsupported(f"{_describe(encoder, 'encoder')} has no portable form: {what} "
                          f"models export when their [model] is gcn, sage, gat, gin or sgc; "
                          f"{FALLBACK}")
    return encoder


def _graph_level(model: GraphModel, inputs: str) -> GraphLevelModel:
    encoder = _encoder(model, inputs, "graph-level")
    readouts = [PortableSet2Set(plain_module(r.lstm, f"readouts.{i}.lstm"), r.steps)
                if r.lstm is not None else
                PortableReadout(r.pooling, None if r.gate is None
                                else plain_module(r.gate, f"readouts.{i}.gate"))
                for i, r in enumerate(model.readouts)]
    twin = portable_model(encoder, "full", edge_features=True)
    weight, bias = model.head()  # any regression target map folded in
    if not any(isinstance(layer, GINEConv) for layer in encoder.layers):
        return GraphLevelModel(twin, readouts, model.read_layers == "all",  # type: ignore[arg-type]
                               weight, bias).eval()
    first = next(layer for layer in encoder.layers if isinstance(layer, GINEConv))
    edge_dim = first.edge_encoder.in_features if isinstance(first.edge_encoder, nn.Linear) \
        else int(encoder.dims[list(encoder.layers).index(first)])
    return EdgeGraphLevelModel(twin, readouts, model.read_layers == "all",  # type: ignore[arg-type]
                               weight, bias, edge_dim=edge_dim).eval()


def _link_level(model: LinkModel, inputs: str) -> LinkLevelModel:
    encoder = _encoder(model, inputs, "link prediction")
    decoder = model.decoder
    if type(decoder) is DotDecoder:
        twin: nn.Module = PortableDot()
    elif type(decoder) is BilinearDecoder:
        twin = PortableBilinear(dense_weight(decoder, "decoder"))
    elif type(decoder) is MLPDecoder:
        twin = PortableMLPDecoder(plain_module(decoder.net, "decoder.net"))
    else:
        raise Unsupported(f"{_describe(decoder, 'decoder')} has no portable twin (dot, mlp "
                          f"and bilinear have); {FALLBACK}")
    return LinkLevelModel(portable_model(encoder, "full"), twin).eval()  # type: ignore[arg-type]


def model_dims(model: nn.Module) -> tuple[int, int]:
    """(input width, output width) of a trained stack, graph or link model (a link model's:
    the embeddings')."""
    if isinstance(model, GraphModel):
        return int(model.encoder.dims[0]), int(model.out_dim)
    if isinstance(model, LinkModel):
        return int(model.encoder.dims[0]), int(model.encoder.dims[-1])
    return int(model.dims[0]), int(model.dims[-1])


def plain_module(module: nn.Module, name: str) -> nn.Module:
    """A copy of ``module`` made of torch's own modules: linear maps become ``nn.Linear``
    (2:4 masks applied), sequences are copied part by part, other ``torch.nn`` modules are
    copied as they are (in-place activations made out of place)."""
    if isinstance(module, nn.Linear):
        out = nn.Linear(module.in_features, module.out_features, bias=module.bias is not None)
        with torch.no_grad():
            out.weight.copy_(dense_weight(module, name))
            if module.bias is not None:
                out.bias.copy_(module.bias.detach().float())
        return out.requires_grad_(False)
    if isinstance(module, nn.Sequential):
        return nn.Sequential(*(plain_module(m, f"{name}.{i}")
                               for i, m in enumerate(module)))
    if type(module).__module__.startswith("torch.nn.") and not list(module.children()):
        out = copy.deepcopy(module).float().requires_grad_(False)
        if getattr(out, "inplace", False):
            out.inplace = False
        return out
    raise Unsupported(f"{_describe(module, name)} is not one of torch's own modules, so it has "
                      f"no portable form; {FALLBACK}")


def dense_weight(module: nn.Module, name: str, attr: str = "weight") -> torch.Tensor:
    """``module.<attr>`` as a dense float32 tensor, its 2:4 ``weight_mask`` applied.

    :raises Unsupported: the weight is not a dense tensor (a semi-structured sparse kernel's).
    """
    w = getattr(module, attr, None)
    if not isinstance(w, torch.Tensor) or type(w) not in (torch.Tensor, nn.Parameter) \
            or w.layout != torch.strided or not w.dtype.is_floating_point:
        held = f"holds a {type(w).__name__} as {attr}" if w is not None \
            else f"has no dense {attr}"
        raise Unsupported(
            f"{_describe(module, name)} {held} (a 2:4 semi-structured GPU kernel's, say), "
            f"which has no portable form; export the model before converting it to 2:4 "
            f"kernels (pruned dense weights export with their zeros), or {FALLBACK}")
    w = w.detach().float()
    mask = getattr(module, "weight_mask", None)
    if attr == "weight" and isinstance(mask, torch.Tensor):
        w = w * mask.to(w.dtype)
    return w


def _twin(layer: nn.Module, name: str, inputs: str) -> nn.Module:
    for cls in type(layer).__mro__:
        make = _TWINS.get(cls)
        if make is not None:
            return make(layer, name, inputs)
    own = getattr(layer, "portable_twin", None)
    if callable(own):
        return own(inputs)
    conv = getattr(layer, "conv", None)
    if isinstance(conv, GATConv) and getattr(layer, "merge", None) in ("concat", "mean"):
        # [model] gat wraps each GATConv in a module that merges its heads.
        return _gat(conv, f"{name}.conv", inputs, merge=layer.merge)
    if isinstance(layer, GATConv):
        raise Unsupported(f"{_describe(layer, name)} cannot be exported on its own: its "
                          f"(num_dst, heads, F) output needs a head merge (as [model] gat "
                          f"builds); {FALLBACK}")
    raise Unsupported(f"{_describe(layer, name)} has no portable twin (register one with "
                      f"graphflow.portable.register_twin, or give the layer a "
                      f"portable_twin(inputs) method); {FALLBACK}")


def _describe(module: nn.Module, name: str) -> str:
    cls = type(module)
    package = cls.__module__.split(".")[0]
    return f"{name} ({cls.__name__}, from package {package})"


def _bias(module: nn.Module) -> torch.Tensor | None:
    bias = getattr(module, "bias", None)
    return None if bias is None else bias.detach()


def _gcn(conv: GCNConv, name: str, inputs: str) -> nn.Module:
    weight = None if conv.weight is None else dense_weight(conv, name)
    bias = None if conv.bias is None else conv.bias.detach()
    return PortableGCN(weight, bias, conv.norm)


def _sage(conv: SAGEConv, name: str, inputs: str) -> nn.Module:
    w_self = dense_weight(conv.fc_self, f"{name}.fc_self")
    w_neigh = dense_weight(conv.fc_neigh, f"{name}.fc_neigh")
    return PortableSAGE(w_self, w_neigh, _bias(conv.fc_self))


def _gin(conv: GINConv, name: str, inputs: str) -> nn.Module:
    mlp = nn.Identity() if conv.mlp is None \
        else plain_module(conv.mlp, f"{name}.mlp")
    return PortableGIN(conv.eps, mlp)


def _gine(conv: GINEConv, name: str, inputs: str) -> nn.Module:
    # registered before GIN's twin (its base class), which would drop the edge features
    mlp = nn.Identity() if conv.mlp is None else plain_module(conv.mlp, f"{name}.mlp")
    encoder = nn.Identity() if conv.edge_encoder is None \
        else plain_module(conv.edge_encoder, f"{name}.edge_encoder")
    return PortableGINE(conv.eps, mlp, encoder)


def _sgc(conv: SGConv, name: str, inputs: str) -> nn.Module:
    if inputs == "block" and conv.k != 1:
        raise Unsupported(f"{name} (SGConv with k = {conv.k}) has no block form: "
                          f"it propagates {conv.k} times over one whole graph; export it with "
                          f'inputs = "full", or train it with k = 1')
    return PortableSGC(dense_weight(conv.fc, f"{name}.fc"), _bias(conv.fc), conv.k,
                       square=inputs == "full")


def _gat(conv: GATConv, name: str, inputs: str, merge: str = "concat") -> nn.Module:
    res_fc = res_bias = None
    if isinstance(conv.res_fc, nn.Linear):
        res_fc = dense_weight(conv.res_fc, f"{name}.res_fc")
        res_bias = _bias(conv.res_fc)
    return PortableGAT(dense_weight(conv.fc, f"{name}.fc"),
                       conv.attn_l.detach(), conv.attn_r.detach(), conv.heads, conv.out_dim,
                       float(conv.negative_slope),
                       None if conv.bias is None else conv.bias.detach(), res_fc, res_bias,
                       isinstance(conv.res_fc, nn.Identity), merge)


register_twin(GCNConv, _gcn)
register_twin(SAGEConv, _sage)
register_twin(GINConv, _gin)
register_twin(GINEConv, _gine)
register_twin(SGConv, _sgc)


def twin_for_export(model: nn.Module, inputs: str, fmt: str) -> Portable:
    """:func:`portable_model`, its errors prefixed with ``cannot export the model to <fmt>``."""
    try:
        return portable_model(model, inputs)  # type: ignore[arg-type]
    except Unsupported as exc:
        raise Unsupported(f"cannot export the model to {fmt}: {exc}") from None
