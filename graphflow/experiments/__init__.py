"""Experiments: trackers of runs, the table of past runs, and sweeps.

* :mod:`graphflow.experiments.tracking`: drives the ``[[track]]`` trackers through a run
  (rank 0 only; a failing tracker warns once and the run goes on).
* :mod:`graphflow.experiments.runs`: ``graphflow runs``, the table of runs read from their
  ``run.json``.

Nothing here imports a tracker's client library: the trackers do, when configured.
"""
