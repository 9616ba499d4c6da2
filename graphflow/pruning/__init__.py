"""Weight pruning for trained models: :mod:`~graphflow.pruning.two_four` (2:4 semi-structured)."""
