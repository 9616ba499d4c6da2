"""Plugin "samplers": neighbor samplers for minibatch training (``[sample]``).

* ``neighbor``: graphflow's vectorised sampler, CPU or GPU (``graphflow.sampling``).
* ``dgl_neighbor``: DGL's C++ sampler behind the same contract, the reference.
* ``typed_neighbor``: neighbour sampling on typed graphs (``graphflow.hetero.sampling``).
* ``dist_neighbor``: DistDGL's sampling through its servers (``graphflow launch``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphflow.plugin import hookimpl
from graphflow_plugins.samplers.dgl_neighbor import DGLNeighborSampler
from graphflow_plugins.samplers.dist_neighbor import DistNeighborSampler
from graphflow_plugins.samplers.neighbor import NeighborSampler
from graphflow_plugins.samplers.typed_neighbor import TypedNeighborSampler

if TYPE_CHECKING:
    from graphflow.registry import Register


@hookimpl
def graphflow_register_samplers(register: Register) -> None:
    register(NeighborSampler)
    register(DGLNeighborSampler)
    register(DistNeighborSampler)
    register(TypedNeighborSampler)
