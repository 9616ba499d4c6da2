"""Sparse core: the adjacency type and the one SpMM dispatch point."""
