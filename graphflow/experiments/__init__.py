"""Experiments: trackers of runs, the table of past runs, sweeps and reports.

* :mod:`graphflow.experiments.tracking`: drives the ``[[track]]`` trackers through a run
  (rank 0 only; a failing tracker warns once and the run goes on).
* :mod:`graphflow.experiments.runs`: ``graphflow runs``, the table of runs read from their
  ``run.json``.
* :mod:`graphflow.experiments.sweep`: ``graphflow sweep``, an Optuna study over a pipeline's
  options (``[sweep]``); :mod:`graphflow.experiments.parallel` runs its trials in worker
  processes (``jobs``), each with its share of the cores.
* :mod:`graphflow.experiments.report`: ``graphflow report``, one self-contained HTML file of a
  run's or a sweep's plots.

Nothing here imports a tracker's client library, Optuna or plotly at import time: each is
imported when the command or the tracker that needs it runs.
"""
