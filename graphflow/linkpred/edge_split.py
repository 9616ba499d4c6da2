"""Edge splits for link prediction: a seeded random hold-out, or the user's own split file.

**Random** (:func:`random_split`). The candidates are the graph's distinct pairs without
self-loops: undirected pairs ``{u, v}`` on an undirected graph (every edge has its reverse),
directed pairs ``(u, v)`` otherwise. One seeded permutation picks ``val`` then ``test``
candidates (fractions of the candidates, or counts). The held-out positives leave the graph,
on an undirected graph in both directions (and every parallel copy), so the message-passing
graph never holds a held-out edge either way round.

**From a file** (:func:`file_split`): rows ``(src, dst, split[, label])`` in the original node
ids, ``split`` one of ``train``, ``val``, ``test``; ``label`` 1 (default) for a positive, 0 for
a negative. Validation and test positives leave the graph as above; ``train`` rows are
training edges that must already be in the graph (they are accepted, not added).

**Negatives**: ``negatives`` per held-out positive, drawn uniformly among the node pairs that
are not an edge of the *full* graph (before the hold-out) in either direction, nor a
self-pair, nor drawn twice (:func:`sample_non_edges`: vectorised
rejection against the sorted edge keys). A split file that lists negatives for a split keeps
them; a split without negatives gets them drawn.

**Typed graphs** (:func:`typed_random_split`): the split is per target relation
``(src_type, relation, dst_type)`` (:func:`target_relations`: one, several or all), in ids
within the types; held-out edges leave their relation and their reverse edges leave the
reverse relation (:func:`reverse_relations`: ``rev-<relation>`` by name, or pairs the user
names, as DGL's ``exclude="reverse_types"``); fixed negatives corrupt the tail with nodes of
the destination type (:func:`~graphflow.linkpred.negatives.corrupt_tails`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError, DataError
from graphflow.graph import NodeIds
from graphflow.io.delimited import read_delimited
from graphflow.io.factorize import factorize
from graphflow.io.edge_keys import first_occurrences, undirected_keys
from graphflow.io.parquet import read_parquet
from graphflow.linkpred.held_out import HeldOutPairs, LinkSplit, Relation, TypedLinkSplit
from graphflow.linkpred.negatives import corrupt_tails

FILE_SPLITS = ("train", "val", "test")


def is_symmetric(src: torch.Tensor, dst: torch.Tensor, num_nodes: int) -> bool:
    """Whether every edge ``u -> v`` has its reverse ``v -> u`` (one sort, one search)."""
    keys = torch.sort(src * num_nodes + dst).values
    rev = dst * num_nodes + src
    pos = torch.searchsorted(keys, rev).clamp(max=max(keys.numel() - 1, 0))
    return bool((keys.numel() == 0) or (keys[pos] == rev).all())


def sample_non_edges(src: torch.Tensor, dst: torch.Tensor, num_nodes: int, count: int,
                     generator: torch.Generator | None = None) -> torch.Tensor:
    """int64 (2, count) distinct pairs ``u < v`` joined by no edge in either direction.

    Draws in vectorised rounds of uniform pairs and rejects edges, self-pairs and repeats.
    """
    if num_nodes < 2:
        raise ValueError("need at least two nodes to sample non-edges")
    edges = torch.unique(undirected_keys(src, dst, num_nodes))
    possible = num_nodes * (num_nodes - 1) // 2 - int((edges // num_nodes != edges % num_nodes).sum())
    if count > possible:
        raise ValueError(f"asked for {count} non-edges but the graph has only {possible}")
    found = torch.zeros(0, dtype=torch.int64)
    while found.numel() < count:
        draw = max(2 * (count - found.numel()), 1024)
        a = torch.randint(num_nodes, (draw,), generator=generator)
        b = torch.randint(num_nodes, (draw,), generator=generator)
        key = undirected_keys(a, b, num_nodes)
        key = key[(a != b) & ~torch.isin(key, edges)]
        found = torch.cat([found, key])
        found = found[first_occurrences(found)]  # drop repeats, keep the order of drawing
    found = found[:count]
    return torch.stack([found // num_nodes, found % num_nodes])


def pair_keys(src: torch.Tensor, dst: torch.Tensor, num_nodes: int,
              undirected: bool) -> torch.Tensor:
    """int64 (E,) key of each edge's pair: ``min * N + max`` (undirected) or ``src * N + dst``."""
    if undirected:
        return undirected_keys(src, dst, num_nodes)
    return src * num_nodes + dst


def count_of(size: int | float, total: int) -> int:
    """A fraction of ``total`` (rounded) or a count."""
    return int(round(size * total)) if isinstance(size, float) else int(size)


def random_split(graph: dgl.DGLGraph, *, val: int | float, test: int | float, negatives: int,
                 undirected: bool, generator: torch.Generator,
                 source: str = "random") -> tuple[dgl.DGLGraph, LinkSplit]:
    """Hold out ``val`` and ``test`` pairs (see the module docstring).

    :returns: the message-passing graph (held-out edges removed; node data and the kept edges'
        data unchanged) and the split.
    :raises DataError: when the split asks for more pairs than there are, or leaves the
        training graph without edges.
    """
    n = graph.num_nodes()
    src, dst = graph.edges()
    keys = pair_keys(src, dst, n, undirected)  # (E,)
    cand = torch.unique(keys[src != dst])  # (C,) sorted distinct non-loop pairs
    nv, nt = count_of(val, cand.numel()), count_of(test, cand.numel())
    if nv + nt >= cand.numel():
        kind = "undirected pairs" if undirected else "edges"
        raise DataError(f"link_split: val ({nv}) + test ({nt}) pairs leave no training edges: "
                        f"the graph has {cand.numel()} distinct {kind} (self-loops excluded); "
                        f"hold out fewer")
    order = torch.randperm(cand.numel(), generator=generator)
    held = [cand[order[:nv]], cand[order[nv:nv + nt]]]  # keys of val, test
    pos = [torch.stack([k // n, k % n]) for k in held]  # (2, P) each; u < v when undirected
    train_graph = without_pairs(graph, torch.cat(held), undirected)
    neg = draw_negatives(src, dst, n, [p.shape[1] * negatives for p in pos], undirected,
                         generator)
    return train_graph, LinkSplit(val=HeldOutPairs(pos[0], neg[0]),
                                  test=HeldOutPairs(pos[1], neg[1]), undirected=undirected,
                                  source=source)


def without_pairs(graph: dgl.DGLGraph, held: torch.Tensor, undirected: bool) -> dgl.DGLGraph:
    """``graph`` minus every edge whose pair key is in ``held`` (node data kept).

    :raises DataError: when no edge would remain.
    """
    n = graph.num_nodes()
    src, dst = graph.edges()
    drop = torch.isin(pair_keys(src, dst, n, undirected), held)  # (E,)
    if bool(drop.all()) and graph.num_edges():
        raise DataError("link_split: the held-out pairs are every edge of the graph, which "
                        "leaves the training graph without edges; hold out fewer")
    return dgl.remove_edges(graph, drop.nonzero().squeeze(1))


def draw_negatives(src: torch.Tensor, dst: torch.Tensor, num_nodes: int, counts: list[int],
                   undirected: bool, generator: torch.Generator) -> list[torch.Tensor]:
    """Distinct non-edges of the full graph, ``counts[i]`` for split ``i``: int64 (2, c) each.

    On a directed graph each pair's orientation is a fair coin (the draw returns ``u < v``).
    """
    total = sum(counts)
    if total == 0:
        return [torch.zeros(2, 0, dtype=torch.int64) for _ in counts]
    try:
        pairs = sample_non_edges(src, dst, num_nodes, total, generator)  # (2, total)
    except ValueError as exc:
        raise DataError(f"link_split: cannot draw {total} negative pairs: {exc}") from None
    if not undirected:
        flip = torch.rand(total, generator=generator) < 0.5
        pairs = torch.where(flip, pairs.flip(0), pairs)
    return list(torch.split(pairs, counts, dim=1))


def file_split(graph: dgl.DGLGraph, ids: NodeIds, path: Path, *, negatives: int,
               undirected: bool, generator: torch.Generator
               ) -> tuple[dgl.DGLGraph, LinkSplit]:
    """Read a split file (see the module docstring) and hold out its val/test positives.

    :raises DataError: naming the file, the row and the value for an unknown node id, a bad
        ``split`` or ``label``; or when the split leaves the training graph without edges.
    """
    table, where = _read_split_table(path)
    n = graph.num_nodes()
    src, dst = _internal_ids(table, ids, where)
    split = _split_codes(table.column("split"), where)  # (R,) 0 train, 1 val, 2 test
    label = _labels(table, where)  # (R,) bool
    gsrc, gdst = graph.edges()
    pos, neg = [], []
    for code in (1, 2):
        rows = (split == code)
        pos.append(torch.stack([src[rows & label], dst[rows & label]]))
        neg.append(torch.stack([src[rows & ~label], dst[rows & ~label]]))
    held = torch.cat([pair_keys(p[0], p[1], n, undirected) for p in pos])
    if held.numel() == 0:
        raise DataError(f"split file {path}: no validation or test positive (split = \"val\" "
                        f"or \"test\" with label 1); nothing to hold out")
    train_graph = without_pairs(graph, held, undirected)
    missing = [i for i, p in enumerate(pos) if neg[i].shape[1] == 0 and p.shape[1] > 0]
    drawn = draw_negatives(gsrc, gdst, n, [pos[i].shape[1] * negatives for i in missing],
                           undirected, generator)
    for i, pairs in zip(missing, drawn):
        neg[i] = pairs
    return train_graph, LinkSplit(val=HeldOutPairs(pos[0], neg[0]),
                                  test=HeldOutPairs(pos[1], neg[1]), undirected=undirected,
                                  source=str(path))


def _read_split_table(path: Path):
    if not path.exists():
        raise DataError(f"split file not found: {path}")
    if path.suffix.lower() in (".parquet", ".pq"):
        read = read_parquet(path, select={"src": "src", "dst": "dst", "split": "split",
                                          "label": "label"}, optional=("label",),
                            what="split file")
    else:
        names = _header(path)
        select = {c: c for c in ("src", "dst", "split")}
        if "label" in names:
            select["label"] = "label"
        read = read_delimited(path, delimiter=None, header=True, select=select,
                              ids=("src", "dst"), what="split file")
    return read.table, read.where


def _header(path: Path) -> list[str]:
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = fh.readline()
    for sep in ("\t", ",", " "):
        if sep in first:
            return [c.strip() for c in first.split(sep)]
    return [first.strip()]


def _internal_ids(table: pa.Table, ids: NodeIds, where) -> tuple[torch.Tensor, torch.Tensor]:
    """Internal ids of the ``src`` / ``dst`` columns; the first unknown id is an error."""
    node_ids = ids.to_arrow()
    columns = []
    for name in ("src", "dst"):
        column = table.column(name)
        if column.null_count:
            row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            raise DataError(f"{where(row)}: {name} is empty; every row needs a src and a dst")
        if column.type != node_ids.type:
            try:
                column = pc.cast(column, node_ids.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                column = pc.cast(column, pa.string())
                node_ids = pc.cast(node_ids, pa.string())
        columns.append(column)
    (_, s, d), _ = factorize([node_ids, *columns])
    n = len(node_ids)
    for codes, name, column in ((s, "src", table.column("src")),
                                (d, "dst", table.column("dst"))):
        unknown = np.flatnonzero(codes >= n)
        if len(unknown):
            row = int(unknown[0])
            value = column.slice(row, 1).to_pylist()[0]
            raise DataError(f"{where(row)}: {name} node id {value!r} is not a node of the "
                            f"graph; fix the id or remove the row")
    return torch.from_numpy(s.astype(np.int64)), torch.from_numpy(d.astype(np.int64))


def _split_codes(column: pa.ChunkedArray, where) -> torch.Tensor:
    text = pc.utf8_lower(pc.utf8_trim_whitespace(pc.cast(column, pa.string())))
    codes = np.full(len(text), -1, dtype=np.int64)
    values = text.to_numpy(zero_copy_only=False)
    for code, name in enumerate(FILE_SPLITS):  # three names, not a loop over rows
        codes[values == name] = code
    bad = np.flatnonzero(codes < 0)
    if len(bad):
        row = int(bad[0])
        raise DataError(f"{where(row)}: split {column.slice(row, 1).to_pylist()[0]!r} is not "
                        f"one of {', '.join(FILE_SPLITS)}")
    return torch.from_numpy(codes)


def _labels(table: pa.Table, where) -> torch.Tensor:
    if "label" not in table.column_names:
        return torch.ones(table.num_rows, dtype=torch.bool)
    column = table.column("label")
    try:
        values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = np.full(table.num_rows, np.nan)
    bad = np.flatnonzero(~np.isin(values, (0.0, 1.0)))
    if len(bad):
        row = int(bad[0])
        raise DataError(f"{where(row)}: label {column.slice(row, 1).to_pylist()[0]!r} must be "
                        f"1 (an edge) or 0 (a non-edge)")
    return torch.from_numpy(values == 1.0)


def read_pairs(path: Path, ids: NodeIds, *, what: str = "pairs file") -> torch.Tensor:
    """int64 (2, P) internal ids of the ``src``, ``dst`` rows of a Parquet or CSV file of
    original node ids (or of a ``.txt`` file of ``src dst`` lines, no header); an unknown id
    names the file, the row and the id."""
    if not path.exists():
        raise DataError(f"{what} not found: {path}")
    if path.suffix.lower() in (".parquet", ".pq"):
        read = read_parquet(path, select={"src": "src", "dst": "dst"}, what=what)
    else:
        text = path.suffix.lower() == ".txt"  # "src dst" lines without a header
        read = read_delimited(path, delimiter=None, header=not text,
                              select={"src": 0, "dst": 1} if text else
                              {"src": "src", "dst": "dst"}, ids=("src", "dst"), what=what)
    src, dst = _internal_ids(read.table, ids, read.where)
    return torch.stack([src, dst])


# -- typed graphs ---------------------------------------------------------------------------

REVERSE_PREFIX = "rev-"


def relation_names(graph: dgl.DGLGraph) -> dict[Relation, str]:
    """Each canonical relation's short name: its relation name when no other canonical
    relation shares it, else ``src_type:relation:dst_type``."""
    rels = list(graph.canonical_etypes)
    counts: dict[str, int] = {}
    for rel in rels:  # over relations
        counts[rel[1]] = counts.get(rel[1], 0) + 1
    return {rel: rel[1] if counts[rel[1]] == 1 else ":".join(rel) for rel in rels}


def find_relation(graph: dgl.DGLGraph, name: str, option: str) -> Relation:
    """The canonical relation ``name`` names: ``src_type:relation:dst_type``, or a relation
    name that only one canonical relation has.

    :raises ConfigError: naming ``option`` and the graph's relations.
    """
    rels = list(graph.canonical_etypes)
    parts = tuple(name.split(":"))
    found = [r for r in rels if (r == parts if len(parts) == 3 else r[1] == name)]
    if len(found) == 1:
        return found[0]
    have = ", ".join(":".join(r) for r in rels)
    if not found:
        raise ConfigError(f'link_split: {option} "{name}" is not a relation of the graph; '
                          f"relations: {have}")
    raise ConfigError(f'link_split: {option} "{name}" names {len(found)} relations '
                      f"({', '.join(':'.join(r) for r in found)}); give it as "
                      f'"src_type:relation:dst_type"')


def reverse_relations(graph: dgl.DGLGraph,
                      pairs: dict[str, str] | None) -> dict[Relation, Relation | None]:
    """Each relation's reverse relation, or None.

    :param pairs: ``{relation: its reverse}`` (names as :func:`find_relation` reads them),
        both ways; None: by name, ``(s, r, d)`` and ``(d, "rev-" + r, s)`` are each other's
        reverse (the loaders' ``reverse = true``).
    :raises ConfigError: for an unknown name, or a pair whose types do not mirror.
    """
    rels = list(graph.canonical_etypes)
    out: dict[Relation, Relation | None] = {r: None for r in rels}
    if pairs is None:
        present = set(rels)
        for s, r, d in rels:  # over relations
            rev = (d, REVERSE_PREFIX + r, s)
            if rev in present:
                out[(s, r, d)], out[rev] = rev, (s, r, d)
        return out
    for a, b in pairs.items():  # over the named pairs
        fwd, rev = find_relation(graph, a, "reverse"), find_relation(graph, b, "reverse")
        if fwd == rev or (fwd[0], fwd[2]) != (rev[2], rev[0]):
            raise ConfigError(f'link_split: reverse "{a}" = "{b}": a reverse relation runs '
                              f"from the other's destination type to its source type "
                              f"({':'.join(fwd)} vs {':'.join(rev)}); a symmetric relation "
                              f"within one type needs no reverse (it is held out both ways)")
        out[fwd], out[rev] = rev, fwd
    return out


def target_relations(graph: dgl.DGLGraph, target: str | list[str],
                     reverse: dict[Relation, Relation | None],
                     pairs: dict[str, str] | None = None) -> list[Relation]:
    """The relations to hold out edges of: one name, a list of names (:func:`find_relation`),
    or ``"all"``: every relation but the reverse side of each reverse pair (the ``rev-`` one;
    of the ``pairs`` the user names, the value side), in the graph's order."""
    if target == "all":
        backward = {find_relation(graph, b, "reverse") for b in (pairs or {}).values()}
        out: list[Relation] = []
        for rel in graph.canonical_etypes:  # over relations
            rev = reverse.get(rel)
            if rel in backward or (pairs is None and rev is not None
                                   and rel[1].startswith(REVERSE_PREFIX)
                                   and not rev[1].startswith(REVERSE_PREFIX)):
                continue  # the forward relation is the target
            out.append(rel)
        return out
    names = [target] if isinstance(target, str) else list(target)
    if not names:
        raise ConfigError('link_split: target = []: name one or more relations, or "all"')
    out = []
    for name in names:  # over the named relations
        rel = find_relation(graph, name, "target")
        if rel not in out:
            out.append(rel)
    return out


def typed_random_split(graph: dgl.DGLGraph, *, targets: list[Relation],
                       reverse: dict[Relation, Relation | None], val: int | float,
                       test: int | float, negatives: int, generator: torch.Generator,
                       source: str = "random") -> tuple[dgl.DGLGraph, TypedLinkSplit]:
    """Hold out ``val`` and ``test`` edges of each target relation of a typed graph.

    Per relation ``(s, r, d)``, the candidates are its distinct pairs (self-pairs excluded
    within one type); a relation within one type whose edges all have their reverse is split
    as undirected pairs (both directions leave together). Fractions are of each relation's
    candidates. The held-out edges leave the relation, and their reverse edges ``(v, u)``
    leave ``reverse[rel]``. Each held-out positive ``(u, v)`` gets ``negatives`` fixed
    negatives ``(u, w)``, ``w`` uniform among the nodes of type ``d`` such that ``(u, w)`` is
    no edge of the full relation (nor a self-pair within one type).

    :returns: the message-passing graph (edge and node data of what remains unchanged) and
        the split (pairs in ids within their types).
    :raises DataError: naming the relation when it has too few edges to hold out, when no
        training edge of it would remain, or when no negative can be drawn.
    """
    drop: dict[Relation, torch.Tensor] = {}
    rels: dict[Relation, LinkSplit] = {}
    for rel in targets:  # over target relations
        s, _, d = rel
        name = ":".join(rel)
        n_d = graph.num_nodes(d)
        src, dst = graph.edges(etype=rel)
        undirected = s == d and is_symmetric(src, dst, n_d)
        keys = pair_keys(src, dst, n_d, undirected)  # (E_r,)
        edges = torch.unique(keys)  # (U,) sorted: every pair of the full relation
        cand = edges[edges // n_d != edges % n_d] if s == d else edges  # (C,) no self-pairs
        nv, nt = count_of(val, cand.numel()), count_of(test, cand.numel())
        if nv + nt >= cand.numel():
            raise DataError(f"link_split: relation {name}: val ({nv}) + test ({nt}) edges "
                            f"leave no training edges of it ({cand.numel()} distinct "
                            f"{'undirected pairs' if undirected else 'edges'}); hold out "
                            f"fewer, or leave it out of target")
        order = torch.randperm(cand.numel(), generator=generator)
        held = [cand[order[:nv]], cand[order[nv:nv + nt]]]  # keys of val, test
        pos = [torch.stack([k // n_d, k % n_d]) for k in held]  # (2, P) each
        every = torch.cat(held)
        _mark(drop, rel, torch.isin(keys, every))
        rev = reverse.get(rel)
        if rev is not None:
            rs, rd = graph.edges(etype=rev)  # (v, u) edges: v of type d, u of type s
            _mark(drop, rev, torch.isin(pair_keys(rd, rs, n_d, undirected), every))
        neg = []
        for p in pos:  # val, test
            try:
                tails = corrupt_tails(p[0], n_d, negatives, generator, forbidden=edges,
                                      undirected=undirected, no_self=s == d)
            except ValueError as exc:
                raise DataError(f"link_split: relation {name}: cannot draw negatives: "
                                f"{exc}") from None
            neg.append(torch.stack([p[0].repeat_interleave(negatives), tails]))
        rels[rel] = LinkSplit(val=HeldOutPairs(pos[0], neg[0]),
                              test=HeldOutPairs(pos[1], neg[1]), undirected=undirected,
                              source=source)
    out = graph
    for rel, mask in drop.items():  # over relations losing edges
        if bool(mask.all()) and mask.numel():
            raise DataError(f"link_split: every edge of relation {':'.join(rel)} is held out, "
                            f"which leaves the training graph without it; hold out fewer")
        out = dgl.remove_edges(out, mask.nonzero().squeeze(1), etype=rel)
    return out, TypedLinkSplit(rels=rels, reverse={r: reverse.get(r) for r in rels},
                               names=relation_names(graph), source=source)


def _mark(drop: dict[Relation, torch.Tensor], rel: Relation, mask: torch.Tensor) -> None:
    drop[rel] = mask if rel not in drop else drop[rel] | mask
