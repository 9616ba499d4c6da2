"""The ``triples`` loader: a knowledge graph in the train / valid / test layout of WN18RR,
FB15k-237 and YAGO3-10 (``head<TAB>relation<TAB>tail``, optional ``entities.dict`` /
``relations.dict``), for ``[train] type = "kg_completion"``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from graphflow.compat.dgl import dgl
from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.kge.triples import Unseen, read_triples
from graphflow.options import option


@dataclass
class TriplesOptions:
    path: Path = option(doc="The folder of train.txt, valid.txt and test.txt "
                            "(+ entities.dict, relations.dict).")
    unseen: Unseen = option(
        "error", 'Valid / test triples naming an entity or relation no training triple names: '
                 '"error", "drop" them, or "keep" them (the published WN18RR protocol).')
    train: str = option("train.txt", "The training triples' file name in path.")
    valid: str = option("valid.txt", "The validation triples' file name in path.")
    test: str = option("test.txt", "The test triples' file name in path.")


class TriplesLoader(Loader):
    """Triples as a graph of one node type, ``entity``, with one relation per predicate
    (the training triples as edges), the entity names as its node ids, and every split's
    index triples and names in ``meta["kg"]`` (a :class:`~graphflow.kge.KnowledgeGraph`)."""

    name = "triples"
    summary = "Knowledge-graph triples (train/valid/test.txt of head, relation, tail)"
    Options = TriplesOptions

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        if not o.path.is_dir():
            raise DataError(f"triples folder not found: {o.path}")
        kg = read_triples(o.path, unseen=o.unseen, info=ctx.info,
                          files={"train": o.train, "valid": o.valid, "test": o.test})
        return kg_graph(kg)


def kg_graph(kg) -> GraphData:
    """The training triples of ``kg`` as a graph (one node type, a relation per
    predicate), ``meta["kg"] = kg``."""
    train = kg.splits["train"]
    names = NodeIds(kg.num_entities, pa.array(list(kg.entities), type=pa.string()))
    num = {"entity": kg.num_entities}
    data = {}
    for r, rel in enumerate(kg.relations):
        sel = train[train[:, 1] == r]  # over relations, not triples
        data[("entity", str(rel), "entity")] = (sel[:, 0], sel[:, 2])
    graph = dgl.heterograph(data, num_nodes_dict=num)
    meta = {"kg": kg}
    if len(kg.relations) > 1:
        return GraphData(graph=graph, ids=NodeIds.identity(kg.num_entities), name=kg.name,
                         meta=meta, typed_ids={"entity": names})
    return GraphData(graph=graph, ids=names, name=kg.name, meta=meta)
