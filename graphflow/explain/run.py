"""Explain a bundle's predictions on a loaded graph or collection, and write the results
with original ids.

What ``graphflow explain`` runs after the data pipeline (:mod:`graphflow.cli.explain`), and
the ``[explain]`` stage of a run after training (:mod:`graphflow.explain.stage`), both
through :func:`explain_to_folder`: the method (a registered
:class:`~graphflow.components.Explainer`) checked against the bundle's kind, the targets
read (nodes, graphs or node pairs, original ids), the explanation, and the files:

* ``edges.{parquet,csv}``: ``target, src, dst, edge, importance, top_k`` per edge of each
  target's computation subgraph (original node ids, a graph target's original graph id, a
  pair's ``"src->dst"``, with ``src_target`` and ``dst_target``; ``edge`` the graph's edge
  index);
* ``features.{parquet,csv}``: ``target, feature, importance`` (feature column index);
* ``explain.json``: the method, the level (node, link or graph), the targets, fidelity+ /
  fidelity- and the characterization score of the top-k subgraphs
  (:mod:`graphflow.explain.metrics`).
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
from graphflow.graphs.encoders import CategoricalEncoder
from graphflow.io.atomic import atomic_path, write_json

TARGETS: dict[str, str] = {"node": "nodes", "link": "pairs", "graph": "graphs"}
"""What each kind of model explains: the option (``--nodes`` / ``nodes = FILE``...) naming them."""
_NAMED = {"nodes": "the nodes to explain", "pairs": "the node pairs to explain",
          "graphs": "the graphs of the collection to explain"}


def check_method(registry: Any, method: str, kind: str, *, where: str = "--method",
                 spelled: str | None = None) -> Any:
    """The explainer class registered as ``method``; one line when it cannot explain a
    ``kind`` model (node, link, graph), naming those that can. ``where`` names the option
    for an unknown method, ``spelled`` the choice (default ``--method NAME``)."""
    cls = registry.get("explainer", method, where=where).cls
    if kind not in cls.explains:
        able = [info.name for info in registry.by_kind("explainer")
                if kind in info.cls.explains]
        nodes = [info.name for info in registry.by_kind("explainer")
                 if "node" in info.cls.explains]
        raise ConfigError(f"{spelled or f'--method {method}'} cannot explain a {kind} model; "
                          + (f"methods that can: {', '.join(able)}" if able else
                             f"no method explains {kind} models yet; node models: "
                             f"{', '.join(nodes)}"))
    return cls


def check_targets(kind: str, which: str, subject: str,
                  spell: Any = lambda which: f"--{which}") -> None:
    """One line when ``which`` (``nodes``, ``graphs`` or ``pairs``) is not what a ``kind``
    model explains (:data:`TARGETS`): ``spell(which)`` is how the message names an option,
    ``subject`` the model's origin (``the bundle in runs/x``)."""
    want = TARGETS.get(kind)
    if want is None:
        raise ConfigError(f"{spell(which)}: {subject} is a {kind} model; explanations are of "
                          f"node, link and graph models")
    if which != want:
        raise ConfigError(f"{spell(which)}: {subject} is a {kind} model; name "
                          f"{_NAMED[want]} with {spell(want)}")


def read_targets(data: GraphData, which: str, path: Path
                 ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(targets, pairs)`` named by the file ``path`` of original ids: ``nodes`` (internal
    ids), ``graphs`` (positions in the collection), or ``pairs`` (``targets`` their positions,
    ``pairs`` int64 (2, P) internal ids: CSV / Parquet columns ``src``, ``dst``, or ``.txt``
    lines ``src dst``)."""
    from graphflow.bundle.ids import lookup, read_id_file

    if which == "graphs":
        return lookup(data.graphs.ids, read_id_file(path, "graph"), what=f"{path}: graph id",
                      member="a graph of the collection"), None
    if which == "pairs":
        from graphflow.linkpred.edge_split import read_pairs

        pairs = read_pairs(Path(path), data.ids, what="pairs file")  # (2, P)
        return torch.arange(pairs.shape[1]), pairs
    return lookup(data.ids, read_id_file(path), what=f"{path}: node id"), None


def explain_to_folder(out: Path, bundle: Any, data: GraphData, explainer: Any, which: str,
                      path: Path, *, top_k: int, fmt: str) -> dict[str, Any]:
    """Explain ``bundle``'s outputs at the targets of the file ``path`` (``which``: nodes,
    graphs or pairs; :func:`read_targets`) on ``data`` with ``explainer``, and write
    :func:`write_explanation`'s files into ``out``; return the summary. What ``graphflow
    explain`` and the ``[explain]`` stage both run."""
    targets, pairs = read_targets(data, which, path)
    exp, model, inputs = explain_targets(bundle, data, targets, explainer, pairs=pairs)
    return write_explanation(out, exp, data, model, inputs, top_k=top_k, fmt=fmt)


def model_depth(module: Any, meta: dict[str, Any]) -> int:
    """The number of message-passing layers (the computation subgraphs' hops)."""
    for obj in (module, getattr(module, "stack", None), getattr(module, "gnn", None),
                getattr(module, "encoder", None)):
        n = getattr(obj, "num_layers", None)
        if isinstance(n, int) and n > 0:
            return n
    layers = meta.get("model", {}).get("layers")
    if isinstance(layers, int) and layers > 0:
        return layers
    raise ConfigError("cannot tell the model's depth (layers) from the bundle; explain needs "
                      "it for the computation subgraphs")


def explain_targets(bundle: Any, data: GraphData, targets: torch.Tensor, explainer: Any, *,
                    pairs: torch.Tensor | None = None) -> tuple[Explanation, Any, GraphInputs]:
    """``explainer``'s explanation of a bundle's predictions at ``targets``: nodes
    (internal ids) of a node model, graphs (positions in the collection) of a graph
    model, or positions in ``pairs`` (2, P) (internal ids) of a link model; with the model
    and the inputs it ran on."""
    from graphflow.bundle.infer import node_embeddings
    from graphflow.sparse.features import to_dense

    if getattr(bundle, "typed", None) is not None:
        raise ConfigError(f"explain: the bundle holds a model of a typed graph "
                          f"({bundle.meta['model']['type']}); explanations are of models of "
                          f"one node type and one relation")
    adj, x = bundle.inputs(data)
    model = bundle.model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    x = to_dense(x).float()  # mostly-zero features (SparseFeatures) too: masks scale them
    if bundle.kind == "graph":
        kind = bundle.model_info.get("target_kind", "classes")
        if kind not in ("classes", "binary"):
            raise ConfigError(f"explain: the bundle's graph model predicts {kind}; "
                              f"explanations are of a class (graph classification models "
                              f"with classes or one 0/1 target)")
        ptr = data.graphs.graph_ptr
        inputs = GraphInputs(adj=adj, x=x, hops=model_depth(model.encoder, bundle.meta),
                             graph_ptr=ptr, embeddings=_graph_node_vectors(model, adj, x, ptr),
                             categorical=isinstance(getattr(model.encoder, "input_encoder",
                                                            None), CategoricalEncoder))
        if kind == "binary":
            model = TwoClasses(model)
    elif bundle.kind == "link":
        if pairs is None:
            raise ConfigError("explain: a link model's explanations are of node pairs; name "
                              "them with --pairs FILE (pairs = FILE in [explain])")
        inputs = GraphInputs(adj=adj, x=x, hops=model_depth(model.encoder, bundle.meta),
                             pairs=pairs)
    else:
        inputs = GraphInputs(adj=adj, x=x, hops=model_depth(model, bundle.meta),
                             embeddings=node_embeddings(model, adj, x)[0])
    return explainer.explain(model, inputs, targets), model, inputs


class TwoClasses(torch.nn.Module):
    """A graph model with one 0/1 target seen as two classes: its score ``s`` (B, 1) as the
    logits ``(0, s)``, whose softmax is ``(1 - σ(s), σ(s))``; so an explanation keeps the
    predicted label's probability, as for a class. Other attributes are the model's."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.inner = model

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        out = self.inner(*args, **kwargs)
        s = out[0]
        return (torch.cat([torch.zeros_like(s), s], 1), *out[1:])

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(super().__getattr__("inner"), name)


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

    ``target`` holds the explained nodes' original ids, or the graphs' (a graph model's), or
    a pair's ``"src->dst"`` of original ids (a link model's), with the pair's ids in the
    extra columns ``src_target`` and ``dst_target``."""
    src, dst = data.graph.find_edges(exp.edge_ids)
    ids = data.ids.to_arrow()
    top = exp.top_k(top_k)
    label, extra = _target_columns(exp, data, inputs)
    edges = pa.table({
        "target": label.take(pa.array(exp.edge_target.numpy())),
        **{k: v.take(pa.array(exp.edge_target.numpy())) for k, v in extra.items()},
        "src": ids.take(pa.array(src.numpy())), "dst": ids.take(pa.array(dst.numpy())),
        "edge": pa.array(exp.edge_ids.numpy()), "importance": pa.array(exp.edge_mask.numpy()),
        "top_k": pa.array(top.numpy())})
    written = [_write_table(out / f"edges.{fmt}", edges, fmt)]
    if exp.feature_mask is not None:
        t, f = exp.feature_mask.shape
        rows = pa.array(torch.arange(t).repeat_interleave(f).numpy())
        feats = pa.table({
            "target": label.take(rows), **{k: v.take(rows) for k, v in extra.items()},
            "feature": pa.array(torch.arange(f).repeat(t).numpy()),
            "importance": pa.array(exp.feature_mask.reshape(-1).numpy())})
        written.append(_write_table(out / f"features.{fmt}", feats, fmt))
    pos, neg = fidelity(model, inputs.adj, inputs.x, _hard(exp), inputs.hops,
                        edge_mask=top.float(), graph_ptr=inputs.graph_ptr, pairs=inputs.pairs)
    summary = {"method": exp.method, "level": inputs.level,
               "targets": int(exp.targets.numel()), "top_k": top_k,
               "fidelity_plus": pos, "fidelity_minus": neg,
               "characterization": characterization_score(pos, neg),
               "files": [str(p) for p in written]}
    write_json(out / "explain.json", summary)
    return summary


def _target_columns(exp: Explanation, data: GraphData, inputs: GraphInputs
                    ) -> tuple[pa.Array, dict[str, pa.Array]]:
    """(T,) each target's label (original node or graph id, a pair's ``"src->dst"``) and,
    for pairs, the ``src_target`` / ``dst_target`` columns of original ids."""
    ids = data.ids.to_arrow()
    if inputs.pairs is not None:
        import pyarrow.compute as pc

        pair = inputs.pairs[:, exp.targets]  # (2, T)
        s, d = ids.take(pa.array(pair[0].numpy())), ids.take(pa.array(pair[1].numpy()))
        label = pc.binary_join_element_wise(pc.cast(s, pa.string()), pc.cast(d, pa.string()),
                                            "->")
        return label, {"src_target": s, "dst_target": d}
    target_ids = ids if inputs.graph_ptr is None else data.graphs.ids
    return target_ids.take(pa.array(exp.targets.numpy())), {}


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
