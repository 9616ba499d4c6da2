"""Plugin "embeddings": Random-walk samplers (node2vec, deepwalk), skip-gram training and embedding evaluation."""
