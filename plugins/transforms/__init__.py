"""Plugin "transforms": Graph transforms."""
