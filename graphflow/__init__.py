"""graphflow: plugin-based graph learning pipelines on DGL and PyTorch.

Importing graphflow is cheap and changes nothing global: the plugin manager is built by
:func:`graphflow.manager.create_host` when a command needs it, and torch's threading settings
(OpenMP's wait policy included) are left as the user set them.
"""

from importlib import metadata

try:
    __version__ = metadata.version("graphflow")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
