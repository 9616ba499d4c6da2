"""What an exported model takes and returns, for its JSON sidecar and for tracing.

:func:`input_names` and :func:`dynamic_axes` name the inputs as the ONNX graph and the sidecar
do; :func:`example_inputs` builds a small random graph of the right widths to trace with;
:func:`sidecar` is the JSON written beside each exported file.
"""

from __future__ import annotations

from typing import Any

import torch

from graphflow.io.plain import plain
from graphflow.portable.pairs import LinkLevelModel
from graphflow.portable.readout import EdgeGraphLevelModel, GraphLevelModel
from graphflow.portable.stack import BlockModel, FullGraphModel

Portable = FullGraphModel | BlockModel | GraphLevelModel | LinkLevelModel

BLOCK_FIELDS = ("src", "dst", "weight", "num_dst")
OUTPUT = "logits"
LINK_OUTPUTS = ("embeddings", "scores")

PREPROCESSING = (
    "Pass raw edges: one (src, dst) row per directed edge, as the training graph held them (an "
    "undirected graph lists both directions), node ids 0..N-1 being rows of x. weight holds "
    "the edge values: ones, unless the model was trained on edge weights. Self-loops (when "
    "the model adds them) and the degree normalisation are computed inside the model from "
    "src and dst; do not add or fold them yourself. x holds the node features after the "
    "pipeline's transforms (the same columns and scaling as in training), dense float32.")

PAIR_PREPROCESSING = (
    " Pair inputs: pair_src and pair_dst (P,) int64 name the rows of x whose pairs are "
    "scored; the outputs are every node's embedding and each pair's raw score (higher = "
    "more likely an edge).")

GRAPH_PREPROCESSING = (
    " Graph inputs: a collection of graphs as one graph whose edges never join two graphs; "
    "graph holds the graph position (0..num_graphs-1) of every row of x, num_graphs (a 0-d "
    "int64) the number of graphs; the output has one row of scores per graph. A model that "
    "reads edge features (gine) takes edge_feat, one row per edge in the order of src and "
    "dst, as the training collection's edata['edge_feat'].")

BLOCK_PREPROCESSING = (
    " Block inputs: one (src, dst, weight, num_dst) group per layer, input side first; in "
    "block l, src indexes the rows of that layer's input (block 0: the rows of x), dst "
    "indexes its destinations 0..num_dst-1, and the destinations are the first num_dst "
    "source rows (the DGL / graphflow block convention). Degrees are counted within each "
    "block, as in sampled training.")


def edge_weights_used(ctx: Any) -> bool | None:
    """Whether the stage that trained ``ctx.artifacts.model`` read edge values
    (``edge_weights = true``); None when the task has no such option."""
    section = (ctx.artifacts.model_info or {}).get("section")
    for spec in ctx.config.train:
        if spec.task.section == section:
            used = getattr(spec.task.options, "edge_weights", None)
            return None if used is None else bool(used)
    return None


def weight_note(edge_weights: bool | None) -> str:
    """What to pass as ``weight``, for the sidecar."""
    if edge_weights:
        return ('the model was trained on edge values (edge_weights = true): pass each '
                'edge\'s value, as edata["weight"] held it')
    if edge_weights is None:
        return "pass ones unless the model was trained on edge values"
    return "the model was trained without edge values: pass ones"


def input_names(model: Portable) -> list[str]:
    """``x, src, dst, weight``, or ``x, src_0, dst_0, weight_0, num_dst_0, src_1, ...``, or
    ``x, src, dst, weight, graph, num_graphs``."""
    if isinstance(model, EdgeGraphLevelModel):
        return ["x", "src", "dst", "weight", "edge_feat", "graph", "num_graphs"]
    if isinstance(model, GraphLevelModel):
        return ["x", "src", "dst", "weight", "graph", "num_graphs"]
    if isinstance(model, LinkLevelModel):
        return ["x", "src", "dst", "weight", "pair_src", "pair_dst"]
    if isinstance(model, FullGraphModel):
        return ["x", "src", "dst", "weight"]
    return ["x"] + [f"{f}_{i}" for i in range(model.num_layers) for f in BLOCK_FIELDS]


def output_names(model: Portable) -> list[str]:
    """``logits``, or a link model's ``embeddings, scores``."""
    return list(LINK_OUTPUTS) if isinstance(model, LinkLevelModel) else [OUTPUT]


def dynamic_axes(model: Portable) -> dict[str, dict[int, str]]:
    """The sizes that vary from call to call: node, edge and graph counts (never the
    widths)."""
    if isinstance(model, GraphLevelModel):
        axes = {"x": {0: "N"}, "src": {0: "E"}, "dst": {0: "E"}, "weight": {0: "E"},
                "graph": {0: "N"}, OUTPUT: {0: "G"}}
        if isinstance(model, EdgeGraphLevelModel):
            axes["edge_feat"] = {0: "E"}
        return axes
    if isinstance(model, LinkLevelModel):
        return {"x": {0: "N"}, "src": {0: "E"}, "dst": {0: "E"}, "weight": {0: "E"},
                "pair_src": {0: "P"}, "pair_dst": {0: "P"}, "embeddings": {0: "N"},
                "scores": {0: "P"}}
    if isinstance(model, FullGraphModel):
        return {"x": {0: "N"}, "src": {0: "E"}, "dst": {0: "E"}, "weight": {0: "E"},
                OUTPUT: {0: "N"}}
    axes: dict[str, dict[int, str]] = {"x": {0: "num_src_0"}}
    for i in range(model.num_layers):
        for f in ("src", "dst", "weight"):
            axes[f"{f}_{i}"] = {0: f"E_{i}"}
    axes[OUTPUT] = {0: f"num_dst_{model.num_layers - 1}"}
    return axes


def example_inputs(model: Portable, in_dim: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """A small random graph to trace with, in the flat input order of :func:`input_names`."""
    gen = torch.Generator().manual_seed(seed)
    if isinstance(model, GraphLevelModel):  # three graphs of 3, 4 and 2 nodes
        sizes = torch.tensor([3, 4, 2])
        graph = torch.repeat_interleave(torch.arange(3), sizes)  # (9,)
        owner = torch.arange(3).repeat(4)  # (12,) the graph of each edge
        first = (torch.cumsum(sizes, 0) - sizes)[owner]

        def ends() -> torch.Tensor:
            return first + (torch.rand(12, generator=gen) * sizes[owner]).long()

        edges = (torch.randn(9, in_dim, generator=gen), ends(), ends(),
                 torch.rand(12, generator=gen) + 0.5)
        if isinstance(model, EdgeGraphLevelModel):
            edges += (torch.randn(12, model.edge_dim, generator=gen),)
        return (*edges, graph, torch.tensor(3))
    if isinstance(model, LinkLevelModel):  # the graph and 5 pairs of its nodes
        n, e = 7, 16
        return (torch.randn(n, in_dim, generator=gen), *_edges(n, n, e, gen),
                torch.randint(0, n, (5,), generator=gen), torch.randint(0, n, (5,),
                                                                        generator=gen))
    if isinstance(model, FullGraphModel):
        n, e = 7, 16
        return (torch.randn(n, in_dim, generator=gen), *_edges(n, n, e, gen))
    sizes = [model.num_layers + 3 - i for i in range(model.num_layers + 1)]  # decreasing
    flat: list[torch.Tensor] = [torch.randn(sizes[0], in_dim, generator=gen)]
    for i in range(model.num_layers):
        flat += [*_edges(sizes[i], sizes[i + 1], 3 * sizes[i], gen),
                 torch.tensor(sizes[i + 1], dtype=torch.int64)]
    return tuple(flat)


def _edges(num_src: int, num_dst: int, e: int,
           gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    src = torch.randint(0, num_src, (e,), generator=gen)  # (E,)
    dst = torch.randint(0, num_dst, (e,), generator=gen)  # (E,)
    return src, dst, torch.rand(e, generator=gen) + 0.5


def sidecar(model: Portable, fmt: str, file: str, in_dim: int,
            out_dim: int, model_info: dict[str, Any] | None,
            extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON beside an exported file: inputs (name, dtype, shape), output, what the
    caller must prepare, and how the model was built."""
    block = isinstance(model, BlockModel)
    inputs = [{"name": "x", "dtype": "float32",
               "shape": ["num_src_0" if block else "N", in_dim]}]
    if block:
        for i in range(model.num_layers):
            inputs += [{"name": f"src_{i}", "dtype": "int64", "shape": [f"E_{i}"]},
                       {"name": f"dst_{i}", "dtype": "int64", "shape": [f"E_{i}"]},
                       {"name": f"weight_{i}", "dtype": "float32", "shape": [f"E_{i}"]},
                       {"name": f"num_dst_{i}", "dtype": "int64", "shape": []}]
    else:
        inputs += [{"name": "src", "dtype": "int64", "shape": ["E"]},
                   {"name": "dst", "dtype": "int64", "shape": ["E"]},
                   {"name": "weight", "dtype": "float32", "shape": ["E"]}]
    graphs = isinstance(model, GraphLevelModel)
    pairs = isinstance(model, LinkLevelModel)
    if isinstance(model, EdgeGraphLevelModel):
        inputs += [{"name": "edge_feat", "dtype": "float32", "shape": ["E", model.edge_dim]}]
    if graphs:
        inputs += [{"name": "graph", "dtype": "int64", "shape": ["N"]},
                   {"name": "num_graphs", "dtype": "int64", "shape": []}]
    if pairs:
        inputs += [{"name": "pair_src", "dtype": "int64", "shape": ["P"]},
                   {"name": "pair_dst", "dtype": "int64", "shape": ["P"]}]
    rows = f"num_dst_{model.num_layers - 1}" if block else "G" if graphs else "N"
    more = BLOCK_PREPROCESSING if block else GRAPH_PREPROCESSING if graphs \
        else PAIR_PREPROCESSING if pairs else ""
    outputs = [{"name": "embeddings", "dtype": "float32", "shape": ["N", out_dim]},
               {"name": "scores", "dtype": "float32", "shape": ["P"]}] if pairs \
        else [{"name": OUTPUT, "dtype": "float32", "shape": [rows, out_dim]}]
    form = "block" if block else "graphs" if graphs else "pairs" if pairs else "full"
    return {"format": fmt, "file": file, "inputs_form": form,
            "inputs": inputs,
            "outputs": outputs,
            "self_loops_added_inside": bool(model.self_loops),
            "preprocessing": PREPROCESSING + more,
            "model_info": plain(model_info or {}), **(extra or {})}
