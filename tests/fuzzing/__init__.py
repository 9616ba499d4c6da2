"""Fuzzing graphflow with malformed input: generators and the property every run must keep.

Test code, not part of the installed package: ``tests/fuzz/`` imports it (``tests/`` is on
``sys.path`` through ``tests/conftest.py``) and so does ``benchmarks/fuzz.py``. Needs
``hypothesis`` (the ``test`` extra).

* :mod:`fuzzing.case`: :class:`~fuzzing.case.Case` (files, a pipeline, ``--set`` values,
  and the names a failure message must mention) and byte-level corruption.
* :mod:`fuzzing.loaders`: one strategy per first-party loader (edgelist, parquet, planetoid,
  mat, networkx, dgl, synthetic): truncated and corrupted files, wrong delimiters and column
  counts, mixed id types, NaN/inf in features and weights, ids out of range, empty tables,
  non-UTF-8 bytes.
* :mod:`fuzzing.pipelines`: malformed pipeline TOML and ``--set`` values: wrong types,
  unknown keys and sections, impossible combinations.
* :mod:`fuzzing.check`: runs a case in-process through ``graphflow.cli.main.main`` under a
  time bound and checks **the property**: graphflow either succeeds (exit 0, a complete
  ``run.json`` with status ok) or exits 1 with one ``graphflow: error:`` line that names the
  file, or for a pipeline error the section, key or line at fault; never a traceback or
  internal error, never a crash wrapped as a plugin failure, never a hang past the bound,
  never a written output without a complete ``run.json``, never a leftover temporary file.

Every case is a pure function of hypothesis's choices: no wall-clock time, process id or
temporary path ends up in its bytes (``tests/fuzz/test_replay.py``), so a seed replays a run.

``STRATEGIES`` maps a component name to a function returning its strategy.
"""

from __future__ import annotations

from fuzzing.case import Case
from fuzzing.check import Outcome, run_case
from fuzzing.loaders import LOADER_STRATEGIES
from fuzzing.pipelines import PIPELINE_STRATEGIES

STRATEGIES = {**LOADER_STRATEGIES, **PIPELINE_STRATEGIES}

__all__ = ["Case", "Outcome", "STRATEGIES", "run_case"]
