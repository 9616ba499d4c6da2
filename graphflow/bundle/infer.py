"""Apply a bundle's model to a graph: node outputs, pair scores, graph outputs.

Node and link models run layer-wise full-neighbour inference in destination batches
(``GNNStack.inference``), so memory grows with the graph's rows times the widest layer,
never with a layer's whole neighbourhood at once; ``batch_size = 0`` computes the whole
graph in one forward pass (what a full-batch training stage did, bit for bit). Pairs and
graphs are scored in chunks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphflow.bundle.load import Bundle
from graphflow.graph import GraphData

Progress = Callable[..., Any]


def batch_size_of(bundle: Bundle, batch_size: int | None) -> int:
    """``batch_size``, or the training stage's own inference batch (0: one pass)."""
    if batch_size is not None:
        return batch_size
    return int(bundle.meta["inputs"].get("inference_batch_size") or 0)


@torch.no_grad()
def node_outputs(bundle: Bundle, data: GraphData, *, batch_size: int | None = None,
                 device: torch.device | str = "cpu",
                 progress: Progress | None = None) -> torch.Tensor:
    """float32 (N, C) logits of a node model, or (N, D) embeddings of a link model's
    encoder, on the CPU, for every node of ``data``; a typed model's rows are the nodes of
    its target type."""
    adj, x = bundle.inputs(data)
    module = bundle.model.encoder if bundle.kind == "link" else bundle.model
    device = torch.device(device)
    module.to(device).eval()
    if bundle.typed is not None:  # the whole typed graph in one pass
        return module.inference(adj, x, device=device)[bundle.target].float().cpu()
    size = batch_size_of(bundle, batch_size)
    if size > 0 and hasattr(module, "inference"):
        out = module.inference(adj, x, batch_size=size, device=device, progress=progress)
    else:
        out = module(adj.to(device), x.to(device))
    return out.float().cpu()


@torch.no_grad()
def hidden_outputs(model: Any, adj: Any, x: Any, *, batch_size: int = 0,
                   device: torch.device | str | None = None,
                   progress: Progress | None = None) -> Any:
    """The last hidden layer's node vectors: what the output layer of ``model`` reads, in
    eval mode with full neighbourhoods (the ``embeddings`` of a node classifier).

    A :class:`~graphflow.nn.stack.GNNStack` (``adj`` one adjacency, ``x`` (N, F)) gives
    (N, D) on ``x``'s device, computed layer-wise in ``batch_size`` destination batches
    (0: one pass); a :class:`~graphflow.nn.typed_stack.TypedStack` (``adj`` a
    :class:`~graphflow.nn.typed.TypedAdjacency`, ``x`` per type) gives (n_t, D) per node
    type. D is the last hidden width (the input width for a one-layer model). None for a
    model without that layer structure (``layer(i, adj, h)`` and ``num_layers``).
    """
    from graphflow.nn.stack import GNNStack
    from graphflow.nn.typed_stack import TypedStack

    hidden = int(getattr(model, "num_layers", 0)) - 1
    if hidden < 0 or not isinstance(model, (GNNStack, TypedStack)):
        return None
    was_training = model.training
    model.eval()
    try:
        if isinstance(model, TypedStack):
            if device is not None:
                adj = adj.to(device)
                x = {t: v.to(device) for t, v in x.items()}
            h = dict(x) if model.input is None else model.input(x)
            for i in range(hidden):
                h = model.layer(i, adj, h)
            if any(not v.is_floating_point() for v in h.values()):
                return None  # a one-layer model on node ids: no vectors before its output
            return {t: v.float() for t, v in h.items()}
        if batch_size > 0:
            out = model.inference(adj, x, batch_size=batch_size, device=device,
                                  progress=progress, layers=hidden)
        else:  # one pass, where the inputs are (as a full-batch stage holds them)
            out = model.layer_outputs(adj, x)[hidden]
        return out.float()
    finally:
        model.train(was_training)


def node_embeddings(model: Any, adj: Any, x: Any, *, batch_size: int = 0,
                    device: torch.device | str | None = None, progress: Progress | None = None
                    ) -> tuple[torch.Tensor | None, list[list[Any]] | None]:
    """``(embeddings, types)``: :func:`hidden_outputs` as one float32 CPU matrix. A typed
    model's rows are every node type's nodes, type after type in the graph's order, and
    ``types`` lists ``[node type, rows]`` in that order (None for a one-type model).
    ``(None, None)`` for a model without the layer structure."""
    out = hidden_outputs(model, adj, x, batch_size=batch_size, device=device,
                         progress=progress)
    if out is None:
        return None, None
    if isinstance(out, dict):
        order = [t for t in x if t in out]  # x holds every type, in the graph's order
        return (torch.cat([out[t].cpu() for t in order]),
                [[t, int(out[t].shape[0])] for t in order])
    return out.cpu(), None


def node_predictions(bundle: Bundle, logits: torch.Tensor) -> torch.Tensor:
    """int64 (N,) classes, or float32 (N, C) 0/1 for a multi-label model."""
    if bundle.multilabel:
        return (logits > 0).float()
    return logits.argmax(dim=-1)


@torch.no_grad()
def pair_scores(bundle: Bundle, h: torch.Tensor, pairs: torch.Tensor, *,
                chunk: int = 65536, device: torch.device | str = "cpu") -> torch.Tensor:
    """float32 (P,) decoder scores of ``pairs`` (2, P) internal ids from embeddings ``h``."""
    from graphflow.linkpred.evaluate import score_pairs

    decoder = bundle.model.decoder.to(device).eval()
    return score_pairs(decoder, h, pairs, chunk=chunk, device=torch.device(device))


@torch.no_grad()
def graph_outputs(bundle: Bundle, data: GraphData, *, batch_size: int = 1024,
                  device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """``(scores (G, C), embeddings (G, D))`` of every graph of a collection, in order."""
    from graphflow.graphs.batch import GraphBatcher

    adj, x = bundle.inputs(data)
    device = torch.device(device)
    model = bundle.model.to(device).eval()
    graphs = data.graphs
    batcher = GraphBatcher(adj.to(device), graphs.graph_ptr.to(device), x.to(device))
    ids = torch.arange(graphs.num_graphs, device=device)
    parts = [model(b) for b in batcher.epoch(ids, batch_size)]
    if not parts:
        g = bundle.meta["graph_model"]  # bundles before set2set: read-out = node widths
        width = sum(g.get("read_widths", g["widths"]))
        return torch.zeros(0, bundle.meta["graph_model"]["out_dim"]), torch.zeros(0, width)
    return (torch.cat([p[0] for p in parts]).float().cpu(),
            torch.cat([p[1] for p in parts]).float().cpu())


def graph_predictions(bundle: Bundle, scores: torch.Tensor) -> torch.Tensor:
    """What a graph task predicts from its scores (classes, 0/1 tasks or values)."""
    from graphflow.graphs.objective import GraphObjective

    info = bundle.model_info
    kind = info.get("target_kind", "classes")
    objective = GraphObjective(kind, int(bundle.meta["graph_model"]["out_dim"]),
                               info.get("loss", "mse"))
    return objective.predict(scores)
