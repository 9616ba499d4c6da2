"""Fuzzing graphflow with malformed input: generators and the property every run must keep.

Shared by the property tests (``tests/fuzz/``) and ``benchmarks/fuzz.py``. Needs
``hypothesis`` (the ``test`` extra); nothing else in graphflow imports this package.

* :mod:`graphflow.fuzz.case`: :class:`~graphflow.fuzz.case.Case` (files, a pipeline, ``--set``
  values, and the names a failure message must mention) and byte-level corruption.
* :mod:`graphflow.fuzz.loaders`: one strategy per first-party loader (edgelist, parquet,
  planetoid, mat, networkx, dgl, synthetic): truncated and corrupted files, wrong delimiters
  and column counts, mixed id types, NaN/inf in features and weights, ids out of range,
  empty tables, non-UTF-8 bytes.
* :mod:`graphflow.fuzz.pipelines`: malformed pipeline TOML and ``--set`` values: wrong
  types, unknown keys and sections, impossible combinations.
* :mod:`graphflow.fuzz.check`: runs a case in-process through ``graphflow.cli.main.main``
  under a time bound and checks **the property**: graphflow either succeeds (exit 0, a
  complete ``run.json`` with status ok) or exits 1 with one ``graphflow: error:`` line that
  names the file, line or key; never a traceback or internal error, never a crash wrapped as
  a plugin failure, never a hang past the bound, never a written output without a complete
  ``run.json``, never a leftover temporary file.

``STRATEGIES`` maps a component name to a function returning its strategy.
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401
except ImportError as exc:  # an optional dependency of graphflow itself
    raise ImportError("graphflow.fuzz needs hypothesis: pip install 'graphflow[test]'") from exc

from graphflow.fuzz.case import Case
from graphflow.fuzz.check import Outcome, run_case
from graphflow.fuzz.loaders import LOADER_STRATEGIES
from graphflow.fuzz.pipelines import PIPELINE_STRATEGIES

STRATEGIES = {**LOADER_STRATEGIES, **PIPELINE_STRATEGIES}

__all__ = ["Case", "Outcome", "STRATEGIES", "run_case"]
