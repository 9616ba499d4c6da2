"""Plugin "loaders": Loaders of real graph formats.

One module per loader; each is registered here under its TOML ``type``.
"""

from __future__ import annotations

from graphflow.plugin import hookimpl
from graphflow.registry import Register
from graphflow_plugins.loaders.dgl import DglLoader
from graphflow_plugins.loaders.dgl_collection import DglCollectionLoader
from graphflow_plugins.loaders.edgelist import EdgelistLoader
from graphflow_plugins.loaders.graph_collection import KernelCollectionLoader
from graphflow_plugins.loaders.mat import MatLoader
from graphflow_plugins.loaders.networkx import NetworkxLoader
from graphflow_plugins.loaders.networkx_collection import NetworkxCollectionLoader
from graphflow_plugins.loaders.parquet import ParquetLoader
from graphflow_plugins.loaders.partitioned import PartitionedLoader
from graphflow_plugins.loaders.planetoid import PlanetoidLoader
from graphflow_plugins.loaders.rdf import RdfLoader
from graphflow_plugins.loaders.smiles import SmilesLoader
from graphflow_plugins.loaders.synthetic import SyntheticLoader
from graphflow_plugins.loaders.table_collection import TableCollectionLoader
from graphflow_plugins.loaders.tables import TablesLoader
from graphflow_plugins.loaders.triples import TriplesLoader
from graphflow_plugins.loaders.tu import TULoader


@hookimpl
def graphflow_register_loaders(register: Register) -> None:
    """Register the built-in loaders."""
    for cls in (DglLoader, EdgelistLoader, MatLoader, NetworkxLoader, ParquetLoader,
                PartitionedLoader, PlanetoidLoader, RdfLoader, SyntheticLoader, TablesLoader,
                TULoader, TriplesLoader,
                KernelCollectionLoader, DglCollectionLoader, TableCollectionLoader,
                NetworkxCollectionLoader, SmilesLoader):
        register(cls)
