"""The ``graphflow`` command."""
