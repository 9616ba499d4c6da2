"""Bundles of models of typed graphs (``rgcn``, the ``hetero`` wrapper): what they record
beyond a one-type bundle, and how they rebuild the model and its per-type input.

A typed model is built for a :class:`~graphflow.nn.typed.TypedSchema`: the node types, the
canonical relations, each type's node count and input width (None for a featureless type,
which enters as node ids looked up in a learned table), and, for the paper's one-hot first
layer (``onehot_input``), the nodes with an out-edge of each relation. ``bundle.json``
records them under ``typed``:

================  ===========================================================================
``target``        the node type the model classifies (its rows are the predictions)
``ntypes``        node types, in the graph's order
``relations``     canonical relations ``[src_type, relation, dst_type]``, in the graph's order
``num_nodes``     nodes of each type at training
``in_dims``       input width of each type, null for a featureless type
``ids``           per type: the Parquet file of its original ids (``ids-<k>.parquet``, ``k``
                  the type's position in ``ntypes``), its count and id type
``schema``        ``typed_schema.pt``: the source nodes of each relation
                  (``torch.load(weights_only=True)``)
================  ===========================================================================

``ids.parquet`` holds the target type's original ids (the rows ``predict`` writes), and
``inputs.in_dim`` the ``in_dims`` table.

New data must be typed like the training graph: the same node types, every trained relation,
each featured type's feature width, and for a featureless type the training graph's nodes
(the same original ids in the same order: the model learnt a row for each of them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import torch

from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.nn.typed import TypedAdjacency, TypedSchema

SCHEMA = "typed_schema.pt"


def ids_file(position: int) -> str:
    """The ids file of the node type at ``position`` in ``ntypes`` (type names may hold any
    character, positions do not)."""
    return f"ids-{position}.parquet"


def type_ids(data: GraphData, ntype: str) -> NodeIds:
    """The original ids of the nodes of ``ntype`` (``0..n-1`` when the loader had none)."""
    if data.typed_ids is not None and ntype in data.typed_ids:
        return data.typed_ids[ntype]
    return NodeIds.identity(data.graph.num_nodes(ntype))


def _id_type(ids: NodeIds) -> str:
    return "identity" if ids.is_identity else str(ids.to_arrow().type)


def typed_record(data: GraphData, info: dict[str, Any]) -> dict[str, Any]:
    """``bundle.json``'s ``typed`` table for a model of the typed graph ``data``
    (``info``: the stage's ``model_info``, with ``node_type`` and ``in_dim`` per featured
    type)."""
    g = data.graph
    widths = info.get("in_dim") if isinstance(info.get("in_dim"), dict) else {}
    target = info.get("node_type")
    if target is None or target not in g.ntypes:
        raise DataError(f"cannot write the model bundle: the model of the typed graph "
                        f"{data.name!r} names no target node type (model_info node_type)")
    return {
        "target": target,
        "ntypes": list(g.ntypes),
        "relations": [list(r) for r in g.canonical_etypes],
        "num_nodes": {t: int(g.num_nodes(t)) for t in g.ntypes},
        "in_dims": {t: (int(widths[t]) if t in widths else None) for t in g.ntypes},
        "ids": [{"type": t, "file": ids_file(k), "count": int(g.num_nodes(t)),
                 "id_type": _id_type(type_ids(data, t))} for k, t in enumerate(g.ntypes)],
        "schema": SCHEMA,
    }


def write_typed_files(folder: Path, data: GraphData, record: dict[str, Any]) -> pa.Array:
    """Write the per-type id files and the schema's sources into ``folder`` (a bundle being
    staged); return the target type's ids (what ``ids.parquet`` holds)."""
    g = data.graph
    for entry in record["ids"]:
        ids = type_ids(data, entry["type"]).to_arrow()
        pq.write_table(pa.table({"id": ids}), folder / entry["file"])
    sources = [torch.unique(g.edges(etype=tuple(r))[0]) for r in record["relations"]]
    torch.save({"sources": sources}, folder / SCHEMA)
    return type_ids(data, record["target"]).to_arrow()


def load_schema(folder: Path, record: dict[str, Any]) -> TypedSchema:
    """The :class:`TypedSchema` the bundle's model was built for."""
    path = folder / record.get("schema", SCHEMA)
    if not path.is_file():
        raise DataError(f"{path}: missing; the bundle is incomplete, train again")
    payload = torch.load(path, weights_only=True)
    relations = tuple(tuple(r) for r in record["relations"])
    sources = payload.get("sources") if isinstance(payload, dict) else None
    if not isinstance(sources, list) or len(sources) != len(relations):
        raise DataError(f"{path}: not the sources of the bundle's {len(relations)} relations; "
                        f"train again")
    return TypedSchema(tuple(record["ntypes"]), relations,  # type: ignore[arg-type]
                       {t: int(n) for t, n in record["num_nodes"].items()},
                       {t: (None if d is None else int(d))
                        for t, d in record["in_dims"].items()},
                       dict(zip(relations, sources)))  # type: ignore[arg-type]


def read_type_ids(folder: Path, record: dict[str, Any], ntype: str) -> NodeIds:
    """The training graph's original ids of the nodes of ``ntype``."""
    entry = next(e for e in record["ids"] if e["type"] == ntype)
    values = pq.read_table(folder / entry["file"]).column("id").combine_chunks()
    return NodeIds(len(values), None if entry["id_type"] == "identity" else values)


def check_typed_data(folder: Path, record: dict[str, Any], data: GraphData,
                     where: str) -> None:
    """Refuse data the typed model cannot read (one line, with the fix).

    :raises DataError: not typed, a node type or trained relation missing, a featured type
        without its features or of another width, a featureless type with other nodes.
    """
    ntypes, relations = record["ntypes"], [tuple(r) for r in record["relations"]]
    shape = f"{len(ntypes)} node types, {len(relations)} relations"
    if not data.is_typed:
        raise DataError(f"the model was trained on a typed graph ({shape}), but {where} has "
                        f"one node type and one relation; load it as the training data was "
                        f"loaded")
    g = data.graph
    missing = [t for t in ntypes if t not in g.ntypes]
    if missing:
        raise DataError(f"{where} has no node type {missing[0]!r}, which the model was trained "
                        f"on ({shape}); load it as the training data was loaded")
    have = set(g.canonical_etypes)
    absent = [r for r in relations if r not in have]
    if absent:
        raise DataError(f"{where} has no relation {absent[0]} ({len(absent)} of the "
                        f"{len(relations)} trained relations are missing); load it as the "
                        f"training data was loaded (with the same reverse relations)")
    for t in ntypes:
        width = record["in_dims"].get(t)
        if width is None:
            n, trained = g.num_nodes(t), int(record["num_nodes"][t])
            same = n == trained and _same_ids(read_type_ids(folder, record, t),
                                              type_ids(data, t))
            if not same:
                raise DataError(f"node type {t!r} is featureless: the model learnt a row for "
                                f"each of its {trained:,} training nodes, but {where} holds "
                                f"{n:,} other nodes; predict on the training graph's "
                                f"{t!r} nodes, or give the type features and retrain")
            continue
        feat = g.nodes[t].data.get("feat")
        if feat is None:
            raise DataError(f"{where} has no features for node type {t!r} "
                            f"(nodes[{t!r}].data['feat']); the model reads {width} columns")
        got = int(feat.shape[1]) if feat.dim() == 2 else 1
        if got != width:
            raise DataError(f"node type {t!r} of {where} has {got} feature columns, but the "
                            f"model was trained on {width}; load the training data's feature "
                            f"columns, in the same order")


def _same_ids(a: NodeIds, b: NodeIds) -> bool:
    if a.is_identity and b.is_identity:
        return len(a) == len(b)
    x, y = a.to_arrow(), b.to_arrow()
    if x.type != y.type:
        x, y = x.cast(pa.string()), y.cast(pa.string())
    return bool(x.equals(y))


def typed_inputs(record: dict[str, Any], data: GraphData, edge_weights: bool
                 ) -> tuple[TypedAdjacency, dict[str, torch.Tensor]]:
    """``(adj, x)`` for a typed model on ``data`` (checked with :func:`check_typed_data`):
    the trained relations' CSRs, and per type the features (featured) or ``0..n-1`` node
    ids (featureless)."""
    g = data.graph
    relations = [tuple(r) for r in record["relations"]]
    if edge_weights and any("weight" not in g.edges[r].data for r in relations):
        raise DataError("the model was trained with edge_weights = true, but a relation of the "
                        "new graph has no edge weights (edges[rel].data['weight'])")
    full = TypedAdjacency.from_graph(g, weight="weight" if edge_weights else None)
    adj = TypedAdjacency({r: full.rels[r] for r in relations}, full.num_src, full.num_dst)
    x: dict[str, torch.Tensor] = {}
    for t in record["ntypes"]:
        if record["in_dims"].get(t) is None:
            x[t] = torch.arange(g.num_nodes(t))
        else:
            feat = g.nodes[t].data["feat"].float()
            x[t] = feat.unsqueeze(1) if feat.dim() == 1 else feat
    return adj, x
