"""Reading and writing graphs: the machinery behind the loaders and exporters.

* :mod:`~graphflow.io.atomic`: temp file then rename, for every output.
* :mod:`~graphflow.io.delimited`: CSV / TSV through pyarrow, errors with line numbers.
* :mod:`~graphflow.io.parquet`: batched Parquet reads, row-grouped atomic writes, run metadata.
* :mod:`~graphflow.io.nodes`: node tables (ids, features, labels, masks).
* :mod:`~graphflow.io.factorize` and :mod:`~graphflow.io.ids`: users' ids <-> ``0..N-1``.
* :mod:`~graphflow.io.assemble`: edge columns + node table -> ``GraphData``.
* :mod:`~graphflow.io.edge_keys`: edge keys and first occurrences (deduplicating edges).
* :mod:`~graphflow.io.dglfile`: DGL binary files carrying ids and metadata.
* :mod:`~graphflow.io.node_split`: seeded, stratified train/val/test masks.
* :mod:`~graphflow.io.synthetic`: seeded SBM and R-MAT generators (the ``synthetic`` loader).
* :mod:`~graphflow.io.plain`: metadata as plain values (JSON, ``weights_only`` loading).
"""
