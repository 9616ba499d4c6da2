"""degree_features: one-hot degrees, replacing or appended, on a collection too."""

from pathlib import Path

from graphflow_plugins.loaders.tu import TULoader, TUOptions
from graphflow_plugins.transforms.degree_features import DegreeFeatures, DegreeFeaturesOptions

RINGS = Path(__file__).resolve().parents[3] / "examples" / "data" / "rings_paths"


def test_degrees_on_a_collection_keep_its_index():
    data = TULoader(TUOptions(path=RINGS, name="RP", features="labels")).load(None)
    out = DegreeFeatures(DegreeFeaturesOptions(append=True)).apply(data, None)
    assert out.graphs is data.graphs
    assert out.graph.ndata["feat"].shape == (168, 2 + 3)  # 2 node labels + degrees 0..2
    capped = DegreeFeatures(DegreeFeaturesOptions(max_degree=1)).apply(data, None)
    assert capped.graph.ndata["feat"].shape == (168, 2)
    assert data.graph.ndata["feat"].shape == (168, 2)  # the input is left alone
