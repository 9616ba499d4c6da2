"""Plugin "tasks": Node classification training."""
