"""Node embeddings from random walks: skip-gram training and embedding evaluation.

* :mod:`~graphflow.embeddings.skipgram`: skip-gram with negative sampling, Hogwild on the CPU.
* :mod:`~graphflow.embeddings.context_pairs`: skip-gram context windows from walk tensors.
* :mod:`~graphflow.embeddings.smoothed_start`: graph-smoothed initial vectors (``init_hops``).
* :mod:`~graphflow.embeddings.evaluation`: node classification (logistic regression) and link AUC.

The walks themselves come from :mod:`graphflow.walks`, the negatives from
:mod:`graphflow.sampling.unigram`.
"""
