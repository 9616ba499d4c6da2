"""The ``rdf`` loader: an RDF entity graph in N-Triples (``.nt``, ``.nt.gz``) as a typed graph,
with labels and splits from TSV files (the R-GCN benchmarks: AIFB, MUTAG, BGS, AM)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.hetero.ntriples import read_ntriples
from graphflow.hetero.rdf import Keep, LabelFiles, NodeTyping, RdfSpec, rdf_graph
from graphflow.options import option


@dataclass
class RdfOptions:
    path: Path = option(doc="The N-Triples file (.nt, or gzip-compressed .nt.gz).")
    entity_prefix: str = option(
        "", "Only IRIs starting with this are entities; statements naming other IRIs are "
            "dropped (as DGL's RDF datasets do). Empty: every IRI.")
    node_types: NodeTyping = option(
        "path", '"path": an entity\'s type is the path segment type_segment after '
                'entity_prefix (DGL\'s AIFBDataset); "single": every entity is of type '
                '"entity" (the original R-GCN setting).')
    type_segment: int = option(0, 'node_types = "path": which segment after entity_prefix '
                                  '(from 0) names the type.')
    literals: Keep = option("nodes", '"nodes": one node per distinct literal value, of type '
                                     '_Literal (as DGL); "drop": drop statements with literals.')
    blank_nodes: Keep = option("drop", '"drop": drop statements with blank nodes (as DGL\'s '
                                       'AIFB); "nodes": keep them, of type _BNode.')
    remove_relations: list[str] = option(
        [], "Predicates to remove (IRI, relation name or local name), e.g. the label relation "
            'and its inverse: ["affiliation", "employs"] for AIFB.')
    reverse: bool = option(True, "Add rev-<relation> for every relation (message passing "
                                 "both ways).")
    train: Path | None = option(None, "Labelled training entities: a TSV file with a header.")
    test: Path | None = option(None, "Labelled test entities (same columns).")
    valid: Path | None = option(None, "Labelled validation entities (same columns).")
    entity_column: str = option("", "Label files: the entity IRI column; empty: the first.")
    label_column: str = option("", "Label files: the label column; empty: the last.")
    val_fraction: float = option(0.0, "Move this fraction of the training entities (drawn "
                                      "with seed) to the validation set.")
    seed: int | None = option(None, "Seed of the val_fraction draw; default: the pipeline seed.")

    def __post_init__(self) -> None:
        if not 0.0 <= self.val_fraction < 1.0:
            raise ValueError(f"val_fraction = {self.val_fraction} must lie in [0, 1)")
        if self.type_segment < 0:
            raise ValueError(f"type_segment = {self.type_segment} must be 0 or more")
        if self.train is None and (self.test is not None or self.valid is not None
                                   or self.val_fraction):
            raise ValueError("test, valid and val_fraction need train (the training label "
                             "file)")
        if self.valid is not None and self.val_fraction:
            raise ValueError("give either valid (a validation file) or val_fraction, not both")


class RdfLoader(Loader):
    """An RDF graph in N-Triples as a typed graph, as DGL's RDF datasets build it.

    Entities (IRIs, optionally only those under ``entity_prefix``) become nodes, typed by a
    path segment of their IRI or all of one type; each distinct literal value becomes a node
    of type ``_Literal``; each predicate becomes a relation (named by its local name) and,
    with ``reverse``, its inverse ``rev-<relation>``. Labels and train / test / validation
    splits come from TSV files naming entities; the labelled type is the target.
    """

    name = "rdf"
    summary = "RDF entity graph in N-Triples (.nt / .nt.gz) as a typed graph, labels from TSV"
    Options = RdfOptions

    def check(self) -> None:
        o = self.options
        if not o.path.is_file():
            raise DataError(f"N-Triples file not found: {o.path}")
        for what, path in (("train", o.train), ("test", o.test), ("valid", o.valid)):
            if path is not None and not path.is_file():
                raise DataError(f"{what} label file not found: {path}")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        self.check()
        spec = RdfSpec(entity_prefix=o.entity_prefix, node_types=o.node_types,
                       type_segment=o.type_segment, literals=o.literals,
                       blank_nodes=o.blank_nodes, remove_relations=list(o.remove_relations),
                       reverse=o.reverse)
        labels = None
        if o.train is not None:
            labels = LabelFiles(train=o.train, test=o.test, valid=o.valid,
                                entity_column=o.entity_column, label_column=o.label_column,
                                val_fraction=o.val_fraction,
                                seed=ctx.seed if o.seed is None else o.seed)
        name = o.path.name.removesuffix(".gz").removesuffix(".nt")
        return rdf_graph(read_ntriples(o.path), spec, labels, name=name, info=ctx.info)
