"""The model bundle of a ``kg_completion`` stage, and what ``graphflow predict`` reads of it.

The folder is the one every training stage writes (:mod:`graphflow.bundle.layout`,
``OUT_DIR/model/``), with ``kind = "kg"``; it holds what answers queries without the
training data:

================================  =========================================================
``bundle.json``                   format, ``kind = "kg"``, the ``[model]`` and ``[train]``
                                  tables, ``kg`` (entities, relations, reciprocal, the
                                  splits), versions, the weights' sha256
``model.pt``                      the entity and relation embeddings (the ``KgeModel``'s
                                  state dict, as every bundle's weights)
``entities.parquet``              the entity names by index (column ``id``: the bundle's id map)
``relations.parquet``             the relation names by index (column ``name``)
``known.parquet``                 every known triple by index (``head``, ``relation``,
                                  ``tail``, int64) and its ``split`` (train, valid, test)
================================  =========================================================

:func:`graphflow.bundle.load_bundle` rebuilds the model (the ``[model]`` component's
``build(entities, relations, reciprocal=...)``); :func:`knowledge_graph` reads the names
and the known triples back as a :class:`~graphflow.kge.triples.KnowledgeGraph`;
:func:`predict_queries` answers a query file with them (:mod:`graphflow.kge.query`) and
writes the answers atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from graphflow.bundle.layout import BUNDLE_JSON, WEIGHTS, bundle_dir
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.io.atomic import atomic_dir, atomic_path, write_json
from graphflow.kge.models import KgeModel
from graphflow.kge.triples import KnowledgeGraph

KIND = "kg"
ENTITIES = "entities.parquet"
RELATIONS = "relations.parquet"
KNOWN = "known.parquet"
ANSWER_FORMATS = ("parquet", "csv")


def write_kg_bundle(ctx: RunContext, task: Any, model: KgeModel,
                    kg: KnowledgeGraph) -> Path | None:
    """Write the stage's bundle (rank 0 only; the folder whole or not at all); return it."""
    from graphflow.bundle.write import bundle_header, sha256
    from graphflow.record import package_versions
    from graphflow.train.restore import model_payload

    if not ctx.world.is_main:
        return None
    info = dict(ctx.artifacts.model_info or {})
    config = ctx.config.resolved()
    meta: dict[str, Any] = {
        **bundle_header(ctx, task, KIND, info, ctx.section),
        "kg": {"entities": kg.num_entities, "relations": kg.num_relations,
               "reciprocal": bool(model.reciprocal), "relations_file": RELATIONS,
               "known_file": KNOWN, "splits": {k: len(v) for k, v in kg.splits.items()}},
        "ids": {"file": ENTITIES, "count": kg.num_entities, "type": "string"},
        "data": {"pipeline": {"name": config["pipeline"]["name"],
                              "seed": config["pipeline"]["seed"]},
                 "load": config["load"], "transform": config["transform"]},
        "versions": package_versions(),
    }
    target = bundle_dir(ctx.out_dir, ctx.section)
    known = torch.cat(list(kg.splits.values())).numpy()
    split = np.repeat(np.array(list(kg.splits), dtype=object),
                      [len(v) for v in kg.splits.values()])
    with atomic_dir(target, what="model bundle") as tmp:
        weights = tmp / WEIGHTS
        torch.save({"what": "model", **model_payload(model, info)}, weights)
        meta["weights"] = {"file": WEIGHTS, "sha256": sha256(weights),
                           "bytes": weights.stat().st_size}
        pq.write_table(pa.table({"id": pa.array(np.asarray(kg.entities, dtype=str))}),
                       tmp / ENTITIES)
        pq.write_table(pa.table({"name": pa.array(np.asarray(kg.relations, dtype=str))}),
                       tmp / RELATIONS)
        pq.write_table(pa.table({"head": known[:, 0], "relation": known[:, 1],
                                 "tail": known[:, 2],
                                 "split": pa.array(split, type=pa.string()).dictionary_encode()}),
                       tmp / KNOWN)
        write_json(tmp / BUNDLE_JSON, meta)
    ctx.add_output(target, "model bundle")
    ctx.info(f"[{ctx.section}] model bundle: {target}")
    return target


def knowledge_graph(folder: Path, meta: dict[str, Any]) -> KnowledgeGraph:
    """The entity and relation names and the known triples of a ``kg`` bundle."""
    rec = meta["kg"]
    try:
        entities = pq.read_table(folder / meta["ids"]["file"]).column("id").to_pylist()
        relations = pq.read_table(folder / rec["relations_file"]).column("name").to_pylist()
        known = pq.read_table(folder / rec["known_file"]).to_pandas()
    except (OSError, KeyError, pa.ArrowInvalid) as exc:
        raise DataError(f"{folder}: the bundle's names or known triples are unreadable "
                        f"({str(exc).splitlines()[0][:120]}); train again") from None
    if len(entities) != rec["entities"] or len(relations) != rec["relations"]:
        raise DataError(f"{folder}: {len(entities)} entities and {len(relations)} relations, "
                        f"but {BUNDLE_JSON} says {rec['entities']} and {rec['relations']}; "
                        f"train again")
    tri = torch.from_numpy(known[["head", "relation", "tail"]].to_numpy(dtype=np.int64, copy=True))
    split = known["split"].astype(str).to_numpy()
    splits = {name: tri[torch.from_numpy(split == name)] for name in rec.get("splits", {})}
    return KnowledgeGraph(entities=np.asarray(entities, dtype=object),
                          relations=np.asarray(relations, dtype=object), splits=splits,
                          name=str(meta.get("pipeline", {}).get("name", "triples")))


def predict_queries(run_dir: Path, queries: Path, out_dir: Path, *, stage: str | None = None,
                    k: int = 10, fmt: str = "parquet", batch_size: int = 256,
                    warn: Any = None) -> tuple[Path, pd.DataFrame, Path]:
    """Answer the queries of ``queries`` with the ``kg`` bundle of ``run_dir``: the top
    ``k`` tails / heads of each, written to ``out_dir/answers.<fmt>`` atomically.

    :returns: ``(the file written, the answers, the bundle folder)``.
    :raises DataError: an unreadable query file, an unknown entity or relation (the file
        and line), a bundle that is not a knowledge-graph model's.
    """
    from graphflow.bundle import load_bundle
    from graphflow.kge.query import answer, read_queries

    if fmt not in ANSWER_FORMATS:
        raise DataError(f"--format {fmt}: a knowledge-graph model writes its answers as "
                        f"{' or '.join(ANSWER_FORMATS)}")
    bundle = load_bundle(run_dir, stage=stage, warn=warn)
    if bundle.kind != KIND:
        raise DataError(f"--queries: the bundle in {run_dir} is a {bundle.kind} model; "
                        f"queries are answered by a kg_completion model")
    kg = knowledge_graph(bundle.path, bundle.meta)
    q, tail_side = read_queries(queries, kg)
    table = answer(bundle.model, kg, q, tail_side, k=k, batch_size=batch_size)
    path = Path(out_dir) / f"answers.{fmt}"
    with atomic_path(path) as tmp:
        if fmt == "csv":
            table.to_csv(tmp, index=False)
        else:
            table.to_parquet(tmp, index=False)
    return path, table, bundle.path
