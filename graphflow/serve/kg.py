"""What ``graphflow serve`` answers for a knowledge-graph (``kg_completion``) bundle.

No graph is loaded and nothing is computed at start beyond the bundle
(:mod:`graphflow.kge.bundle`: the embeddings, the entity and relation names, the known
triples). ``POST /complete`` takes queries of names, as ``graphflow predict --queries`` reads
them from a file, and answers each with its top ``k`` tails or heads
(:func:`graphflow.kge.query.answer`)::

    POST /complete {"queries": [["00260881", "_hypernym", "?"],
                                ["?", "_member_meronym", "08176077"]], "k": 5}
    -> {"answers": [{"query": 0, "head": ..., "relation": ..., "tail": ..., "rank": 1,
                     "score": ..., "known": false, "split": null}, ...]}

Bad requests get the service's statuses (:class:`~graphflow.serve.service.RequestError`):
422 for a query that is not three names with exactly one ``?`` or an unknown entity or
relation (``queries[i]: ...``), 413 for more than ``max_items`` queries.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from graphflow.bundle.load import Bundle
from graphflow.kge.triples import KnowledgeGraph
from graphflow.serve.service import RequestError, _list

ENDPOINTS = ["GET /health", "GET /model", "POST /complete"]
MAX_K = 1000
"""The most answers per query a request may ask for."""


@dataclass
class KgService:
    """A knowledge-graph bundle and its names and known triples (see the module docstring)."""

    bundle: Bundle
    kg: KnowledgeGraph
    max_items: int = 100_000
    lock: threading.Lock = field(default_factory=threading.Lock)

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "kind": self.bundle.kind, "entities": self.kg.num_entities,
                "relations": self.kg.num_relations}

    def model(self) -> dict[str, Any]:
        b, meta = self.bundle, self.bundle.meta
        return {"bundle": str(b.path), "kind": b.kind, "model": meta.get("model"),
                "task": (meta.get("task") or {}).get("type"), "versions": b.versions,
                "created": meta.get("created"),
                "differences": [d.line() for d in b.differences],
                "kg": {"entities": self.kg.num_entities,
                       "relations": [str(r) for r in self.kg.relations],
                       "known": {k: len(v) for k, v in self.kg.splits.items()}},
                "endpoints": ENDPOINTS}

    def line(self) -> str:
        """What ``graphflow serve`` says it serves."""
        return f"{self.kg.num_entities:,} entities, {self.kg.num_relations:,} relations"

    def complete(self, body: Any) -> dict[str, Any]:
        """``{"queries": [[head, relation, tail], ...], "k": 10}`` → the top ``k`` answers
        of each query (``?`` in the place asked for)."""
        from graphflow.kge.query import answer, encode_queries

        rows = _list(body, "queries", self.max_items)
        k = body.get("k", 10)
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            raise RequestError(422, f"k: give a whole number of answers in 1..{MAX_K}")
        bad = next((i for i, q in enumerate(rows) if not (isinstance(q, list) and len(q) == 3
                                                          and all(isinstance(v, str) for v in q))),
                   None)
        if bad is not None:
            raise RequestError(422, f"queries[{bad}]: give [head, relation, tail] names with ? "
                                    f"in the place asked for")
        if not rows:
            return {"answers": []}
        frame = pd.DataFrame(rows, columns=[0, 1, 2])
        queries, tail_side = encode_queries(frame, self.kg, lambda i: f"queries[{i}]",
                                            error=lambda m: RequestError(422, m))
        with self.lock:  # one scoring at a time: it uses every core
            table = answer(self.bundle.model, self.kg, queries, tail_side, k=k)
        columns = {c: table[c].astype(object).where(table[c].notna(), None).tolist()
                   for c in table.columns}  # Python scalars and None (no split), for JSON
        return {"answers": [dict(zip(columns, values)) for values in zip(*columns.values())]}


def start_kg_service(bundle: Bundle) -> KgService:
    """The service of a loaded ``kg`` bundle."""
    from graphflow.kge.bundle import knowledge_graph

    return KgService(bundle=bundle, kg=knowledge_graph(bundle.path, bundle.meta))
