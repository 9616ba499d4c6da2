"""Answering completion queries with a trained model: ``(head, relation, ?)`` and
``(?, relation, tail)``, the top-k candidates with their scores, names and whether each is
already a known triple (and of which split).

A query file names one query a row, with ``?`` in the place asked for:

* ``.txt`` / ``.tsv``: ``head<TAB>relation<TAB>tail`` lines without a header, as the
  triples themselves (``00260881<TAB>_hypernym<TAB>?``);
* ``.csv``: a header ``head,relation,tail`` and one query a line;
* ``.parquet``: string columns ``head``, ``relation``, ``tail``.

:func:`read_queries` maps the names through the graph's vocabulary (a name it does not know
stops with the file and the line); :func:`answer` scores each batch of queries against every
entity (``score_t`` / ``score_h``), takes the top ``k`` and looks every answer up among the
known triples (a sorted key ``(h * R + r) * E + t`` per triple, one ``searchsorted`` per
batch). ``graphflow predict RUN_DIR --queries FILE`` runs both on a ``kg_completion``
bundle (:mod:`graphflow.kge.bundle`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from graphflow.errors import DataError
from graphflow.kge.models import KgeModel
from graphflow.kge.triples import KnowledgeGraph, _read_columns


QUERY_COLUMNS = ("head", "relation", "tail")


def _query_frame(path: Path) -> tuple[pd.DataFrame, np.ndarray]:
    """The queries as string columns 0, 1, 2 and the file line of each row."""
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet", ".pq"):
        frame = _read_columns(path, 3, "head, relation, tail with ? in the place asked for")
        return frame, frame["line"].to_numpy()
    if not path.is_file():
        raise DataError(f"query file not found: {path}")
    try:
        if suffix == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        else:
            frame = pd.read_parquet(path)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise DataError(f"{path}: cannot read queries ({str(exc).splitlines()[0][:150]})") \
            from None
    missing = [c for c in QUERY_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: no column {', '.join(missing)} (columns: "
                        f"{', '.join(map(str, frame.columns))}); name them head, relation, "
                        f"tail, with ? in the place asked for")
    frame = frame[list(QUERY_COLUMNS)].astype(str)
    frame.columns = [0, 1, 2]
    lines = np.arange(len(frame)) + (2 if suffix == ".csv" else 1)  # the header is line 1
    empty = (frame == "").any(axis=1).to_numpy()
    if empty.any():
        at = int(np.flatnonzero(empty)[0])
        what = "line" if suffix == ".csv" else "row"
        raise DataError(f"{path}, {what} {int(lines[at])}: an empty field; give head, "
                        f"relation and tail, with ? in the place asked for")
    return frame.reset_index(drop=True), lines


def read_queries(path: Path | str, kg: KnowledgeGraph) -> tuple[torch.Tensor, torch.Tensor]:
    """``(queries (n, 3) int64 with -1 for the asked place, tail_side (n,) bool)``.

    :raises DataError: one line naming the file and the line (a Parquet file: the row) of
        the first bad query: not exactly one ``?``, an unknown entity or relation (with how
        many queries name one).
    """
    path = Path(path)
    frame, lines = _query_frame(path)
    if frame.empty:
        raise DataError(f"{path}: no queries")
    where = "row" if path.suffix.lower() in (".parquet", ".pq") else "line"
    return encode_queries(frame, kg, lambda i: f"{path}, {where} {int(lines[i])}")


def encode_queries(frame: pd.DataFrame, kg: KnowledgeGraph, where: Callable[[int], str],
                   error: Callable[[str], Exception] = DataError
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """Queries of names (string columns 0, 1, 2; ``?`` in the place asked for) as
    :func:`read_queries` returns them; ``where(i)`` names row ``i`` in the message of
    ``error`` (raised, one line)."""
    ask_t, ask_h = (frame[2] == "?").to_numpy(), (frame[0] == "?").to_numpy()
    bad = ask_t == ask_h
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise error(f"{where(at)}: put ? in exactly one of the head and tail places")
    ents, rels = pd.Index(kg.entities), pd.Index(kg.relations)
    cols = []
    for col, index, what in ((0, ents, "entity"), (1, rels, "relation"), (2, ents, "entity")):
        codes = index.get_indexer(frame[col])
        asked = (frame[col] == "?").to_numpy()
        missing = (codes < 0) & ~asked
        if missing.any():
            at = int(np.flatnonzero(missing)[0])
            raise error(f"{where(at)}: unknown {what} {frame[col].iloc[at]!r} "
                        f"({int(missing.sum())} such queries); use the names of the training "
                        f"triples")
        cols.append(np.where(asked, -1, codes))
    return torch.from_numpy(np.stack(cols, 1).astype(np.int64)), torch.from_numpy(ask_t.copy())


def triple_keys(triples: torch.Tensor, num_entities: int, num_relations: int) -> torch.Tensor:
    """One int64 key per ``(h, r, t)`` row: ``(h * R + r) * E + t``."""
    if num_entities * num_entities * max(num_relations, 1) >= 2 ** 63:
        raise DataError(f"{num_entities} entities and {num_relations} relations: triple keys "
                        f"overflow int64")
    h, r, t = triples.long().unbind(-1)
    return (h * num_relations + r) * num_entities + t


@dataclass
class KnownSplits:
    """The known triples' sorted keys and, per key, the first split that holds it."""

    keys: torch.Tensor   # (K,) sorted unique
    split: torch.Tensor  # (K,) index into names
    names: list[str]
    num_entities: int
    num_relations: int

    @classmethod
    def build(cls, kg: KnowledgeGraph) -> KnownSplits:
        names = list(kg.splits)
        e, r = kg.num_entities, kg.num_relations
        keys = torch.cat([triple_keys(t, e, r) for t in kg.splits.values()])
        code = torch.cat([torch.full((len(t),), i) for i, t in enumerate(kg.splits.values())])
        order = torch.argsort(keys, stable=True)  # a key's earliest split first
        keys, code = keys[order], code[order]
        unique, counts = torch.unique_consecutive(keys, return_counts=True)
        first = torch.cumsum(counts, 0) - counts
        return cls(unique, code[first], names, e, r)

    def lookup(self, triples: torch.Tensor) -> torch.Tensor:
        """(n,) the split index of each ``(h, r, t)`` row, -1 where none holds it."""
        if not len(self.keys):
            return torch.full((len(triples),), -1)
        key = triple_keys(triples, self.num_entities, self.num_relations)
        pos = torch.searchsorted(self.keys, key).clamp(max=len(self.keys) - 1)
        return torch.where(self.keys[pos] == key, self.split[pos], -1)


@torch.no_grad()
def answer(model: KgeModel, kg: KnowledgeGraph, queries: torch.Tensor,
           tail_side: torch.Tensor, *, k: int = 10, batch_size: int = 256) -> pd.DataFrame:
    """The top ``k`` answers of every query: columns ``query`` (its row, from 0), ``head``,
    ``relation``, ``tail`` (names), ``rank`` (1 = the best score), ``score``, ``known`` (the
    triple is in train, valid or test) and ``split`` (the first split that holds it, else
    None)."""
    k = min(k, kg.num_entities)
    known = KnownSplits.build(kg)
    was = model.training
    model.eval()
    rows, answers, scores = [], [], []
    for start in range(0, len(queries), batch_size):  # over batches
        q, side = queries[start:start + batch_size], tail_side[start:start + batch_size]
        h, r, t = q.unbind(1)
        s = torch.empty(len(q), kg.num_entities)  # (B, E)
        if side.any():
            s[side] = model.score_t(h[side], r[side]).float()
        if (~side).any():
            s[~side] = model.score_h(r[~side], t[~side]).float()
        top_s, top_e = torch.topk(s, k, dim=1)  # (B, k)
        rows.append(torch.arange(start, start + len(q)).repeat_interleave(k))
        answers.append(top_e.flatten())
        scores.append(top_s.flatten())
    model.train(was)
    row, ent = torch.cat(rows), torch.cat(answers)
    q = queries[row]
    side = tail_side[row]
    heads = torch.where(side, q[:, 0], ent)
    tails = torch.where(side, ent, q[:, 2])
    split = known.lookup(torch.stack([heads, q[:, 1], tails], 1)).numpy()
    names = np.array(known.names + [None], dtype=object)  # -1: None
    return pd.DataFrame({
        "query": row.numpy(), "head": kg.entities[heads.numpy()],
        "relation": kg.relations[q[:, 1].numpy()], "tail": kg.entities[tails.numpy()],
        "rank": np.tile(np.arange(1, k + 1), len(queries)),
        "score": torch.cat(scores).numpy(), "known": split >= 0,
        "split": pd.Series(names[split], dtype=object)})  # None where no split holds it
