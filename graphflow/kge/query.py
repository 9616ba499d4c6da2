"""Answering completion queries with a trained model: ``(head, relation, ?)`` and
``(?, relation, tail)``, the top-k candidates with their scores, names and whether each is
already a known triple.

A query file has one ``head<TAB>relation<TAB>tail`` line per query with ``?`` in the place
asked for (``00260881<TAB>_hypernym<TAB>?``). :func:`read_queries` maps the names through the
graph's vocabulary (a name it does not know stops with the file and the line);
:func:`answer` scores each batch of queries against every entity (``score_t`` /
``score_h``), takes the top ``k`` and looks the answers up in the known triples (the CSR
index of :mod:`graphflow.kge.evaluate`).

This is the Python form; ``graphflow predict`` and ``serve`` do not load a
``kg_completion`` model yet.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from graphflow.errors import DataError
from graphflow.kge.evaluate import Filter
from graphflow.kge.models import KgeModel
from graphflow.kge.triples import KnowledgeGraph, _read_columns


def read_queries(path: Path | str, kg: KnowledgeGraph) -> tuple[torch.Tensor, torch.Tensor]:
    """``(queries (n, 3) int64 with -1 for the asked place, tail_side (n,) bool)``."""
    path = Path(path)
    frame = _read_columns(path, 3, "head, relation, tail with ? in the place asked for")
    if frame.empty:
        raise DataError(f"{path}: no queries")
    lines = frame["line"].to_numpy()
    ask_t, ask_h = (frame[2] == "?").to_numpy(), (frame[0] == "?").to_numpy()
    bad = ask_t == ask_h
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise DataError(f"{path}, line {int(lines[at])}: put ? in exactly one of the head and "
                        f"tail places")
    ents, rels = pd.Index(kg.entities), pd.Index(kg.relations)
    cols = []
    for col, index, what in ((0, ents, "entity"), (1, rels, "relation"), (2, ents, "entity")):
        codes = index.get_indexer(frame[col])
        asked = (frame[col] == "?").to_numpy()
        missing = (codes < 0) & ~asked
        if missing.any():
            at = int(np.flatnonzero(missing)[0])
            raise DataError(f"{path}, line {int(lines[at])}: unknown {what} "
                            f"{frame[col].iloc[at]!r} ({int(missing.sum())} such queries)")
        cols.append(np.where(asked, -1, codes))
    return torch.from_numpy(np.stack(cols, 1).astype(np.int64)), torch.from_numpy(ask_t.copy())


@torch.no_grad()
def answer(model: KgeModel, kg: KnowledgeGraph, queries: torch.Tensor,
           tail_side: torch.Tensor, *, k: int = 10, batch_size: int = 256) -> pd.DataFrame:
    """The top ``k`` answers of every query: columns ``query`` (its row), ``head``,
    ``relation``, ``tail`` (names), ``rank``, ``score``, ``known`` (the triple is in train,
    valid or test)."""
    k = min(k, kg.num_entities)
    flt = Filter.build(kg.known(), kg.num_entities, kg.num_relations)
    model.eval()
    rows, answers, scores, known = [], [], [], []
    for start in range(0, len(queries), batch_size):  # over batches
        q, side = queries[start:start + batch_size], tail_side[start:start + batch_size]
        h, r, t = q.unbind(1)
        s = torch.empty(len(q), kg.num_entities)
        if side.any():
            s[side] = model.score_t(h[side], r[side]).float()
        if (~side).any():
            s[~side] = model.score_h(r[~side], t[~side]).float()
        top_s, top_e = torch.topk(s, k, dim=1)  # (B, k)
        is_known = torch.zeros(len(q), kg.num_entities, dtype=torch.bool)
        for mask, index, a, b in ((side, flt.tails, h, r), (~side, flt.heads, r, t)):
            sel = torch.nonzero(mask).flatten()
            if len(sel):
                qr, ent = index.lookup(a[sel], b[sel])
                is_known[sel[qr], ent] = True
        rows.append(torch.arange(start, start + len(q)).repeat_interleave(k))
        answers.append(top_e.flatten())
        scores.append(top_s.flatten())
        known.append(torch.gather(is_known, 1, top_e).flatten())
    row, ent = torch.cat(rows), torch.cat(answers)
    q = queries[row]
    side = tail_side[row]
    heads = torch.where(side, q[:, 0], ent).numpy()
    tails = torch.where(side, ent, q[:, 2]).numpy()
    return pd.DataFrame({
        "query": row.numpy(), "head": kg.entities[heads], "relation": kg.relations[q[:, 1]],
        "tail": kg.entities[tails], "rank": np.tile(np.arange(1, k + 1), len(queries)),
        "score": torch.cat(scores).numpy(), "known": torch.cat(known).numpy()})
