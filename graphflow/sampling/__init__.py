"""Minibatch sampling: the block/minibatch types and graphflow's samplers."""
