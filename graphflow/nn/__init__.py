"""Sparse message-passing layers, one per file."""
