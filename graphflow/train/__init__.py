"""Training utilities shared by tasks: inputs, metrics, optimizers, the epoch loop, checkpoints.

* :mod:`graphflow.train.step`: the one training step (autocast precision, gradient scaling,
  clipping, optimizer step) and the pass protocol every training pass follows.
* :mod:`graphflow.train.objective`: every task's loss, predictions and figures (classes,
  multi-label, binary and regression with missing targets, scored pairs).
* :mod:`graphflow.train.inputs`: features, labels and splits from the run, with clear errors.
* :mod:`graphflow.train.metrics`: every task's metrics (accuracy, F1, AUC, AP, MRR, Hits@K).
* :mod:`graphflow.train.optim`: optimizers by name, weight decay on all or the first layer.
* :mod:`graphflow.train.loop`: epochs, evaluation, early stopping, checkpoints, ``--resume``.
* :mod:`graphflow.train.checkpoint`: atomic checkpoint files and random-generator state.
* :mod:`graphflow.train.task`: the base of supervised tasks (shared options, optimizer, loop,
  checkpoint meta, inference set-up, results), which every training task builds on.
"""
