"""Explain a bundle's predictions on a loaded graph or collection, and write the results
with original ids.

What ``graphflow explain`` runs after the data pipeline (:mod:`graphflow.cli.explain`):
the method (a registered :class:`~graphflow.components.Explainer`) checked against the
bundle's kind, the explanation, and the files:

* ``edges.{parquet,csv}``: ``target, src, dst, edge, importance, top_k`` per edge of each
  target's computation subgraph (original node ids, a graph target's original graph id;
  ``edge`` the graph's edge index);
* ``features.{parquet,csv}``: ``target, feature, importance`` (feature column index);
* ``explain.json``: the method, the level (node or graph), the targets, fidelity+ / fidelity- and the
  characterization score of the top-k subgraphs (:mod:`graphflow.explain.metrics`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import torch

from graphflow.errors import ConfigError
from graphflow.explain.explanation import Explanation, GraphInputs
from graphflow.explain.metrics import characterization_score, fidelity
from graphflow.graph import GraphData
from graphflow.io.atomic import atomic_path, write_json

def check_method(registry: Any, method: str, kind: str) -> Any:
    """The explainer class registered as ``method``; one line when it cannot explain a
    ``kind`` model (node, link, graph), naming those that can."""
    cls = registry.get("explainer", method, where="--method").cls
    if kind not in cls.explains:
        able = [info.name for info in registry.by_kind("explainer")
                if kind in info.cls.explains]
        nodes = [info.name for info in registry.by_kind("explainer")
                 if "node" in info.cls.explains]
        raise ConfigError(f"--method {method} cannot explain a {kind} model; "
                          + (f"methods that can: {', '.join(able)}" if able else
                             f"no method explains {kind} models yet; node models: "
                             f"{', '.join(nodes)}"))
    return cls


def model_depth(module: Any, meta: dict[str, Any]) -> int:
    """The number of message-passing layers (the computation subgraphs' hops)."""
    for obj in (module, getattr(module, "stack", None), getattr(module, "gnn", None)):
        n = getattr(obj, "num_layers", None)
        if isinstance(n, int) and n > 0:
            return n
    layers = meta.get("model", {}).get("layers")
    if isinstance(layers, int) and layers > 0:
        return layers
    raise ConfigError("cannot tell the model's depth (layers) from the bundle; explain needs "
                      "it for the computation subgraphs")


def explain_targets(bundle: Any, data: GraphData, targets: torch.Tensor,
                    explainer: Any) -> tuple[Explanation, Any, GraphInputs]:
    """``explainer``'s explanation of a bundle's predictions at ``targets``: nodes
    (internal ids) of a node model, or graphs (positions in the collection) of a graph
    model; with the model and the inputs it ran on."""
    from graphflow.bundle.infer import node_embeddings
    from graphflow.sparse.indexed_rows import materialize

    adj, x = bundle.inputs(data)
    model = bundle.model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    x = materialize(x).float()
    if bundle.kind == "graph":
        kind = bundle.model_info.get("target_kind", "classes")
        if kind != "classes":
            raise ConfigError(f"explain: the bundle's graph model predicts {kind}; "
                              f"explanations are of a class (graph classification models)")
        ptr = data.graphs.graph_ptr
        inputs = GraphInputs(adj=adj, x=x, hops=model_depth(model.encoder, bundle.meta),
                             graph_ptr=ptr, embeddings=_graph_node_vectors(model, adj, x, ptr))
    else:
        inputs = GraphInputs(adj=adj, x=x, hops=model_depth(model, bundle.meta),
                             embeddings=node_embeddings(model, adj, x)[0])
    return explainer.explain(model, inputs, targets), model, inputs


@torch.no_grad()
def _graph_node_vectors(model: Any, adj: Any, x: torch.Tensor,
                        graph_ptr: torch.Tensor) -> torch.Tensor:
    """(N, D) a graph model's last node vectors (what its read-out reads last), every graph
    of the collection in one block-diagonal batch."""
    from graphflow.graphs.batch import GraphBatcher

    batcher = GraphBatcher(adj, graph_ptr, x)
    batch = batcher.batch(torch.arange(batcher.num_graphs))
    return model.node_vectors(batch)[-1].float()


def write_explanation(out: Path, exp: Explanation, data: GraphData, model: Any,
                      inputs: GraphInputs, *, top_k: int, fmt: str) -> dict[str, Any]:
    """Write ``edges``, ``features`` and ``explain.json`` into ``out``; return the summary.

    ``target`` holds the explained nodes' original ids, or the graphs' (a graph model's)."""
    src, dst = data.graph.find_edges(exp.edge_ids)
    ids = data.ids.to_arrow()
    target_ids = ids if inputs.graph_ptr is None else data.graphs.ids
    top = exp.top_k(top_k)
    edges = pa.table({
        "target": target_ids.take(pa.array(exp.targets[exp.edge_target].numpy())),
        "src": ids.take(pa.array(src.numpy())), "dst": ids.take(pa.array(dst.numpy())),
        "edge": pa.array(exp.edge_ids.numpy()), "importance": pa.array(exp.edge_mask.numpy()),
        "top_k": pa.array(top.numpy())})
    written = [_write_table(out / f"edges.{fmt}", edges, fmt)]
    if exp.feature_mask is not None:
        t, f = exp.feature_mask.shape
        feats = pa.table({
            "target": target_ids.take(pa.array(exp.targets.repeat_interleave(f).numpy())),
            "feature": pa.array(torch.arange(f).repeat(t).numpy()),
            "importance": pa.array(exp.feature_mask.reshape(-1).numpy())})
        written.append(_write_table(out / f"features.{fmt}", feats, fmt))
    pos, neg = fidelity(model, inputs.adj, inputs.x, _hard(exp), inputs.hops,
                        edge_mask=top.float(), graph_ptr=inputs.graph_ptr)
    summary = {"method": exp.method, "level": inputs.level,
               "targets": int(exp.targets.numel()), "top_k": top_k,
               "fidelity_plus": pos, "fidelity_minus": neg,
               "characterization": characterization_score(pos, neg),
               "files": [str(p) for p in written]}
    write_json(out / "explain.json", summary)
    return summary


def _hard(exp: Explanation) -> Explanation:
    """``exp`` without its feature mask: fidelity of the top-k edges alone."""
    return Explanation(targets=exp.targets, target_class=exp.target_class,
                       edge_target=exp.edge_target, edge_ids=exp.edge_ids,
                       edge_mask=exp.edge_mask, feature_mask=None, method=exp.method)


def _write_table(path: Path, table: pa.Table, fmt: str) -> Path:
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, tmp)
        else:
            import pyarrow.csv as pcsv

            pcsv.write_csv(table, tmp)
    return path
