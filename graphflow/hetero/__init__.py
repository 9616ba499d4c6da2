"""Typed (heterogeneous) graphs: several node types, several relations.

* :mod:`graphflow.hetero.build`: per-type node tables and per-relation edge columns in, a
  checked typed :class:`~graphflow.graph.GraphData` out (what every typed loader uses).
* :mod:`graphflow.hetero.ntriples`: a vectorised N-Triples reader (``.nt``, ``.nt.gz``).
* :mod:`graphflow.hetero.rdf`: RDF entity graphs (the R-GCN benchmarks' AIFB, MUTAG...) as
  typed graphs, with labels and splits from TSV files.
* :mod:`graphflow.hetero.tables`: typed node and edge tables (CSV or Parquet) described in TOML.
"""

from graphflow.hetero.build import RelationEdges, typed_graph

__all__ = ["RelationEdges", "typed_graph"]
