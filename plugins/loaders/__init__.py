"""Plugin "loaders": Loaders of real graph formats."""
