"""Plugin "models": Stacks of sparse message-passing layers."""
