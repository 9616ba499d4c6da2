"""Plugin "embeddings": Random-walk samplers (node2vec, deepwalk), skip-gram training and embedding evaluation."""

from __future__ import annotations

from graphflow.plugin import hookimpl
from graphflow.registry import Register
from graphflow_plugins.embeddings.evaluation import EmbeddingEvalTask
from graphflow_plugins.embeddings.samplers import DeepWalkSampler, Node2VecSampler
from graphflow_plugins.embeddings.skipgram import SkipGramTask


@hookimpl
def graphflow_register_samplers(register: Register) -> None:
    """Register the random-walk samplers."""
    register(Node2VecSampler)
    register(DeepWalkSampler)


@hookimpl
def graphflow_register_tasks(register: Register) -> None:
    """Register the skip-gram and embedding-evaluation tasks."""
    register(SkipGramTask)
    register(EmbeddingEvalTask)
