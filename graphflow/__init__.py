"""graphflow: plugin-based graph learning pipelines on DGL and PyTorch.

Importing graphflow is cheap and has no side effects; the plugin manager is built by
:func:`graphflow.manager.create_host` when a command needs it.
"""

from importlib import metadata

try:
    __version__ = metadata.version("graphflow")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
