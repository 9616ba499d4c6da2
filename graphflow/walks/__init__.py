"""Random walks (node2vec, DeepWalk) and skip-gram training."""
