"""RDF entity graphs (N-Triples) as typed graphs, the way the R-GCN benchmarks and DGL's RDF
datasets (``AIFBDataset``, ``MUTAGDataset``...) build them.

* **Statements.** Repeated statements count once (an RDF graph is a set). Statements whose
  predicate is in ``remove_relations`` are dropped (the label relation and its inverse, e.g.
  AIFB's ``affiliation`` and ``employs``), and so are statements with a term that is not kept
  (below).
* **Entities** are IRIs (only those starting with ``entity_prefix``, when one is given: the
  statements of other IRIs are dropped, as DGL does). Their node type is

  - ``node_types = "path"``: the path segment ``type_segment`` after ``entity_prefix``
    (AIFB: ``http://www.aifb.uni-karlsruhe.de/Personen/viewPersonOWL/id1instance`` is of type
    ``Personen``), as DGL's ``AIFBDataset`` types its entities; an IRI without that segment
    is of type ``entity``;
  - ``node_types = "single"``: one type, ``entity``, for every IRI, as the original R-GCN code
    and PyG's ``Entities`` datasets have it.
* **Literals** (``literals = "nodes"``, the default): one node per distinct literal value
  (language tag and datatype ignored, as DGL's ``str(literal)``), of type ``_Literal``;
  ``"drop"`` drops the statements with a literal object.
* **Blank nodes** (``_:b1``): dropped by default, as in DGL's AIFB and MUTAG; ``"nodes"``
  keeps them as nodes of type ``_BNode`` (as DGL's AM).
* **Relations**: one per predicate, named by the predicate's local name (after the last ``#``
  or ``/``; ``.`` becomes ``_``). Where two predicates share a local name, or the name is an
  attribute of ``torch.nn.Module`` (``type``, ``float``...: names that cannot key a
  ``ModuleDict``), the name gets its namespace's prefix (``rdf_type``, ``rdfs_label``...). A
  relation joining several pairs of node types gives one canonical edge type per pair.
  ``reverse`` adds ``rev-<relation>`` for each.
* **Labels** come from TSV files with a header (training, test and optional validation
  files): the entity IRI column and the label column; labels are numbered in sorted order
  (names in ``meta["classes"]``); every labelled entity must be in the graph and all of them
  of one node type, the target (``meta["target"]``), which gets ``label`` (``-1`` unlabelled)
  and ``train_mask`` / ``val_mask`` / ``test_mask``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import torch

from graphflow.errors import DataError, did_you_mean, first_line
from graphflow.graph import GraphData
from graphflow.hetero.build import RelationEdges, typed_graph
from graphflow.hetero.ntriples import BLANK, IRI, LITERAL, Triples
from graphflow.io.factorize import factorize

NodeTyping = Literal["path", "single"]
Keep = Literal["nodes", "drop"]
ENTITY, LITERAL_TYPE, BLANK_TYPE = "entity", "_Literal", "_BNode"

NAMESPACES = {
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf",
    "http://www.w3.org/2000/01/rdf-schema#": "rdfs",
    "http://www.w3.org/2002/07/owl#": "owl",
    "http://www.w3.org/2001/XMLSchema#": "xsd",
    "http://xmlns.com/foaf/0.1/": "foaf",
    "http://purl.org/dc/elements/1.1/": "dc",
    "http://purl.org/dc/terms/": "dcterms",
    "http://www.w3.org/2004/02/skos/core#": "skos",
}
"""Prefixes for relation names that need their namespace."""


@dataclass
class RdfSpec:
    """How to turn statements into a typed graph (see the module docstring)."""

    entity_prefix: str = ""
    node_types: NodeTyping = "path"
    type_segment: int = 0
    literals: Keep = "nodes"
    blank_nodes: Keep = "drop"
    remove_relations: list[str] = field(default_factory=list)
    reverse: bool = True


@dataclass
class LabelFiles:
    """Labels and splits: TSV files with a header, one labelled entity per row."""

    train: Path
    test: Path | None = None
    valid: Path | None = None
    entity_column: str = ""
    label_column: str = ""
    val_fraction: float = 0.0
    seed: int = 0


def rdf_graph(triples: Triples, spec: RdfSpec, labels: LabelFiles | None = None,
              *, name: str = "rdf", info: Callable[[str], None] | None = None) -> GraphData:
    """The typed graph of ``triples`` (see the module docstring), with labels if given.

    :param info: where to say what was dropped (``ctx.info`` in a loader).
    """
    triples = _distinct(triples)
    names = relation_names(pc.unique(triples.predicate).to_pylist())
    removed, absent = _removed(triples, names, spec.remove_relations)
    if absent and info is not None:
        info(f"remove_relations: {', '.join(map(repr, absent))} name no predicate of "
             f"{triples.path.name}; nothing removed for "
             f"{'it' if len(absent) == 1 else 'them'}"
             f"{did_you_mean(absent[0], names.values()) if len(absent) == 1 else ''}")
    s_type, s_ok = _node_types(triples.subject, triples.subject_kind, spec)
    o_type, o_ok = _node_types(triples.object, triples.object_kind, spec)
    keep = ~removed & s_ok & o_ok
    if not keep.any():
        raise DataError(f"{triples.path}: no statement is left after removing relations and "
                        f"terms outside entity_prefix = {spec.entity_prefix!r}; check "
                        f"entity_prefix and remove_relations")
    rows = np.flatnonzero(keep)
    triples = triples.take(rows)
    s_type, o_type = s_type.take(pa.array(rows)), o_type.take(pa.array(rows))
    names = relation_names(pc.unique(triples.predicate).to_pylist())  # of what is kept
    rel_name = pa.array(list(names.values())).take(
        pc.index_in(triples.predicate, value_set=pa.array(list(names))))
    relations = _group(triples, s_type, rel_name, o_type)
    ntypes = sorted({t for r in relations for t in (r.src_type, r.dst_type)})
    data = typed_graph(nodes={t: None for t in ntypes}, edges=relations, reverse=spec.reverse,
                       name=name, meta={"source": str(triples.path)})
    if labels is not None:
        _attach_labels(data, labels, spec)
    return data


def relation_names(predicates: Sequence[str]) -> dict[str, str]:
    """A readable, unique name for each predicate IRI (see the module docstring)."""
    local = {p: _local(p) for p in predicates}
    count: dict[str, int] = {}
    for n in local.values():
        count[n] = count.get(n, 0) + 1
    reserved = set(dir(torch.nn.Module))
    out = {}
    for p, n in local.items():  # over distinct predicates
        if count[n] > 1 or n in reserved or not n:
            n = f"{_namespace_prefix(p)}_{n}" if n else _namespace_prefix(p)
        out[p] = n
    taken: dict[str, str] = {}
    for p, n in out.items():
        if n in taken:  # still ambiguous: fall back on the whole IRI, made a valid key
            out[p] = p.replace(".", "_")
        taken[out[p]] = p
    return out


def _local(iri: str) -> str:
    cut = max(iri.rfind("#"), iri.rfind("/"))
    return iri[cut + 1:].replace(".", "_")


def _namespace_prefix(iri: str) -> str:
    for ns, prefix in NAMESPACES.items():
        if iri.startswith(ns):
            return prefix
    cut = max(iri.rfind("#"), iri.rfind("/"))
    segments = [s for s in iri[:cut].replace("#", "/").split("/") if s]
    return (segments[-1] if segments else "ns").replace(".", "_")


def _distinct(triples: Triples) -> Triples:
    """Each statement once, in order of first appearance."""
    (codes,), uniques = factorize([pc.binary_join_element_wise(
        triples.subject, triples.predicate, triples.object_raw, "\x00")])
    if len(uniques) == len(triples):
        return triples
    _, first = np.unique(codes, return_index=True)
    return triples.take(np.sort(first))


def _removed(triples: Triples, names: dict[str, str], remove: list[str]
             ) -> tuple[np.ndarray, list[str]]:
    """Statements whose predicate is named (IRI, relation name or local name) in ``remove``,
    and the names that match no predicate (a stripped file no longer has the label
    relation; a misspelt name is reported to the user)."""
    if not remove:
        return np.zeros(len(triples), dtype=bool), []
    wanted = set(remove)
    drop = [p for p, n in names.items() if p in wanted or n in wanted or _local(p) in wanted]
    found = {x for p in drop for x in (p, names[p], _local(p))}
    unknown = [r for r in remove if r not in found]
    mask = pc.is_in(triples.predicate, value_set=pa.array(drop, pa.string())).to_numpy(
        zero_copy_only=False)
    return mask, unknown


def _node_types(values: pa.Array, kind: np.ndarray, spec: RdfSpec
                ) -> tuple[pa.Array, np.ndarray]:
    """The node type of each term, and whether the term is kept."""
    types = np.full(len(values), ENTITY, dtype=object)
    ok = kind == IRI
    if spec.entity_prefix:
        ok &= pc.starts_with(values, spec.entity_prefix).to_numpy(zero_copy_only=False)
    out = pa.array(types, type=pa.string())
    if spec.node_types == "path" and ok.any():
        rest = pc.utf8_slice_codeunits(values, len(spec.entity_prefix))
        segments = pc.split_pattern(rest, "/")
        n = pc.list_value_length(segments).to_numpy(zero_copy_only=False)
        has = ok & (n > spec.type_segment + 1)  # the type segment and something after it
        if has.any():
            picked = pc.list_element(segments.filter(pa.array(has)), spec.type_segment)
            out = pc.replace_with_mask(out, pa.array(has), picked)
    if spec.literals == "nodes":
        literal = kind == LITERAL
        out = pc.if_else(pa.array(literal), LITERAL_TYPE, out)
        ok |= literal
    if spec.blank_nodes == "nodes":
        blank = kind == BLANK
        out = pc.if_else(pa.array(blank), BLANK_TYPE, out)
        ok |= blank
    empty = ok & (pc.equal(out, "").to_numpy(zero_copy_only=False))
    if empty.any():
        out = pc.if_else(pa.array(empty), ENTITY, out)
    return out, ok


def _group(triples: Triples, s_type: pa.Array, rel: pa.Array, o_type: pa.Array
           ) -> list[RelationEdges]:
    """One :class:`RelationEdges` per (subject type, relation, object type)."""
    (codes,), keys = factorize([pc.binary_join_element_wise(s_type, rel, o_type, "\x00")])
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(keys) + 1))
    out = []
    for k, key in enumerate(keys.to_pylist()):  # over relations, not statements
        rows = order[bounds[k]:bounds[k + 1]]
        index = pa.array(rows)
        st, r, ot = key.split("\x00")
        line = triples.line[rows]
        out.append(RelationEdges(st, r, ot, triples.subject.take(index),
                                 triples.object.take(index),
                                 where=lambda i, line=line: f"{triples.path}:{int(line[i])}",
                                 source=str(triples.path)))
    return out


# ---------------------------------------------------------------------- labels
def _read_tsv(path: Path, files: LabelFiles) -> tuple[pa.Array, pa.Array]:
    if not path.is_file():
        raise DataError(f"label file not found: {path}")
    try:
        table = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter="\t"),
                               convert_options=pacsv.ConvertOptions(
                                   column_types={c: pa.string() for c in
                                                 (files.entity_column, files.label_column) if c}))
    except pa.ArrowInvalid as exc:
        raise DataError(f"{path}: cannot read it as a tab-separated table with a header "
                        f"({first_line(exc)})") from None
    names = table.column_names
    entity = files.entity_column or names[0]
    label = files.label_column or names[-1]
    for option, column in (("entity_column", entity), ("label_column", label)):
        if column not in names:
            raise DataError(f"{path}: no column {column!r} ({option}); columns: "
                            f"{', '.join(names)}")
    if len(names) < 2 and not (files.entity_column and files.label_column):
        raise DataError(f"{path}: one column only; a label file needs an entity column and a "
                        f"label column")
    ent = table.column(entity).combine_chunks().cast(pa.string())
    lab = table.column(label).combine_chunks().cast(pa.string())
    for values, what in ((ent, "entity"), (lab, "label")):
        if values.null_count:
            row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
            raise DataError(f"{path}:{row + 2}: empty {what}")
    return ent, lab


def _attach_labels(data: GraphData, files: LabelFiles, spec: RdfSpec) -> None:
    parts = [(split, path, *_read_tsv(path, files))
             for split, path in (("train", files.train), ("test", files.test),
                                 ("val", files.valid)) if path is not None]
    g = data.graph
    by_type = data.typed_ids or {g.ntypes[0]: data.ids}  # one type, one relation: untyped
    target = None
    located = []
    for split, path, ent, lab in parts:  # over files
        hits = {t: pc.index_in(ent, value_set=ids.to_arrow())
                for t, ids in by_type.items() if not ids.is_identity}
        found = {t: h for t, h in hits.items() if h.null_count < len(h)}
        if not found:
            raise DataError(f"{path}:2: entity {ent[0].as_py()!r} is not a node of the graph "
                            f"(after removals); check the file's entity column and "
                            f"entity_prefix")
        if target is None:
            if len(found) > 1:
                raise DataError(f"{path}: labelled entities are of several node types "
                                f"({', '.join(sorted(found))}); label one type")
            target = next(iter(found))
        elif set(found) != {target}:
            other = next(t for t in found if t != target)
            raise DataError(f"{path}: labelled entities of type {other!r}, but the first "
                            f"label file labels type {target!r}; label one type")
        position = hits[target]
        if position.null_count:
            row = int(np.flatnonzero(position.is_null().to_numpy(zero_copy_only=False))[0])
            raise DataError(f"{path}:{row + 2}: entity {ent[row].as_py()!r} is not a node of "
                            f"the graph (after removals); remove the row or keep its "
                            f"statements")
        located.append((split, path, position.to_numpy(zero_copy_only=False).astype(np.int64),
                        lab))
    classes = pc.unique(pa.chunked_array([lab for *_, lab in located])).sort()
    n = g.num_nodes(target)
    label = torch.full((n,), -1, dtype=torch.int64)
    masks = {m: torch.zeros(n, dtype=torch.bool) for m in ("train_mask", "val_mask",
                                                           "test_mask")}
    for split, path, nodes, lab in located:
        taken = masks["train_mask"] | masks["val_mask"] | masks["test_mask"]
        again = np.flatnonzero(taken[torch.from_numpy(nodes)].numpy())
        if len(again):
            raise DataError(f"{path}:{int(again[0]) + 2}: entity "
                            f"{by_type[target].to_arrow()[int(nodes[again[0]])].as_py()!r}"
                            f" is already labelled by another split file; splits must not "
                            f"overlap")
        codes = pc.index_in(lab, value_set=classes).to_numpy(zero_copy_only=False)
        label[torch.from_numpy(nodes)] = torch.from_numpy(codes.astype(np.int64))
        masks[f"{split}_mask"][torch.from_numpy(nodes)] = True
    if files.val_fraction > 0:
        if files.valid is not None:
            raise DataError("give either a validation file (valid) or val_fraction, not both")
        train = torch.nonzero(masks["train_mask"]).flatten()
        gen = torch.Generator().manual_seed(files.seed)
        count = int(round(files.val_fraction * len(train)))
        val = train[torch.randperm(len(train), generator=gen)[:count]]
        masks["train_mask"][val] = False
        masks["val_mask"][val] = True
    frame = g.nodes[target].data
    frame["label"] = label
    for mask, values in masks.items():
        if values.any() or mask != "val_mask":
            frame[mask] = values
    data.meta.update(target=target, classes=classes.to_pylist(), num_classes=len(classes))
