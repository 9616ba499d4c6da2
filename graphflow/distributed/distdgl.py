"""DistDGL roles of a ``graphflow launch`` run: the server entry point and the trainer's client.

``graphflow launch`` (:mod:`graphflow.distributed.launch`) starts, on each machine, one
DistDGL server and ``T`` trainers with DGL's own environment protocol (the variables DGL's
``tools/launch.py`` sets: ``DGL_ROLE``, ``DGL_SERVER_ID``, ``DGL_NUM_SERVER``,
``DGL_NUM_CLIENT``, ``DGL_NUM_SAMPLER``, ``DGL_CONF_PATH``, ``DGL_IP_CONFIG``,
``DGL_GRAPH_FORMAT``, ``DGL_DIST_MODE``), plus torch's (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``) for the trainers' DDP group.

* a server is ``python -m graphflow.distributed.distdgl``: :func:`dgl.distributed.initialize`
  in the server role (``DistGraphServer.start()``), which returns only when the last trainer
  has left;
* a trainer is an ordinary ``graphflow run``; :meth:`World.group
  <graphflow.distributed.world.World.group>` calls :func:`initialize` (DGL's ``initialize``)
  before ``init_process_group``, as DGL requires, and the ``partitioned`` loader and the
  ``dist_neighbor`` sampler read the graph through :func:`dist_graph`.

``GRAPHFLOW_MACHINE_ID``: DGL takes a client's machine id from the first ip-config line with
a local address, so on one host (``graphflow launch --local M``, every line 127.0.0.1) every
trainer would be machine 0. The launcher sets each trainer's machine id in this variable and
:func:`initialize` makes DGL's lookup return it.
"""

from __future__ import annotations

import os
from typing import Any

from graphflow.compat.dgl import dgl

MACHINE_ID_ENV = "GRAPHFLOW_MACHINE_ID"
_graphs: dict[tuple[str, str], Any] = {}


def is_trainer(env: dict[str, str] | None = None) -> bool:
    """Whether this process is a DistDGL trainer (started by ``graphflow launch``)."""
    env = dict(os.environ) if env is None else env
    return env.get("DGL_ROLE") == "client" and env.get("DGL_DIST_MODE") == "distributed"


def _pin_machine_id() -> None:
    """Make DGL's machine-id lookup return ``GRAPHFLOW_MACHINE_ID`` when it is set."""
    if MACHINE_ID_ENV not in os.environ:
        return
    machine = int(os.environ[MACHINE_ID_ENV])
    # connect_to_server looks the function up in its module at call time
    dgl.distributed.rpc_client.get_local_machine_id = lambda server_namebook: machine


def initialize() -> None:
    """Connect this trainer to the DistDGL servers (once; before ``init_process_group``)."""
    if dgl.distributed.dist_context.is_initialized():
        return
    _pin_machine_id()
    dgl.distributed.initialize(os.environ["DGL_IP_CONFIG"])


def dist_graph(graph_name: str, part_config: str) -> Any:
    """This trainer's ``dgl.distributed.DistGraph`` of ``graph_name`` (one per process)."""
    key = (graph_name, str(part_config))
    if key not in _graphs:
        initialize()
        _graphs[key] = dgl.distributed.DistGraph(graph_name, part_config=str(part_config))
    return _graphs[key]


def serve() -> None:
    """Run this machine's DistDGL server (``DGL_ROLE=server``) until the trainers leave."""
    dgl.distributed.initialize(os.environ["DGL_IP_CONFIG"])  # server role: serves, then exits


if __name__ == "__main__":
    serve()
