"""graphflow: plugin-based graph learning pipelines on DGL and PyTorch.

Importing graphflow is cheap: the plugin manager is built by
:func:`graphflow.manager.create_host` when a command needs it. The one thing done at import is
an OpenMP default, below.
"""

import os
import sys
from importlib import metadata

if "torch" not in sys.modules:
    # libgomp's workers spin while they wait. When the machine has any other work (a second
    # process, a prefetch thread, a busy CI box) a spinning worker holds a core its peer
    # needs, and each of the thousands of small parallel regions in a training run stalls
    # for a scheduler tick: Cora epochs measured 20-50x slower on a 2-core machine. Sleeping
    # waiters cost little when the machine is idle (benchmarks and docs/sparse.md). Only a
    # default: an OMP_WAIT_POLICY in the environment wins, and it must be set before torch
    # loads OpenMP, so graphflow is best imported first.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

try:
    __version__ = metadata.version("graphflow")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
