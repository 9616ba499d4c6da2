"""A small weighted graph with string ids, loaded for real, and a helper to transform it."""

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

EDGES = "a b 1\nb a 2\nb c 3\nc c 4\na b 5\nd e 6\n"


@pytest.fixture
def transformed(run_toml, tmp_path: Path) -> Callable[..., object]:
    """``transformed('[[transform]]...')`` -> GraphData after loading the graph and those
    transforms: a -> b (twice), b -> a, b -> c, c -> c, d -> e, f isolated; weights 1..6."""
    (tmp_path / "e.txt").write_text(EDGES)
    pq.write_table(pa.table({
        "id": ["a", "b", "c", "d", "e", "f"],
        "feat": pa.array([[float(i), 1.0] for i in range(6)], pa.list_(pa.float32())),
        "label": ["x", "y", "x", "y", "x", "y"],
    }), tmp_path / "n.parquet")

    def run(transforms: str = "", seed: int = 0):
        text = (f"[pipeline]\nseed = {seed}\n[load]\ntype = \"edgelist\"\npath = \"e.txt\"\n"
                f"directed = true\nweight_column = 2\nnodes = \"n.parquet\"\n{transforms}")
        return run_toml(text).ctx.data

    return run


def edge_triples(data) -> list[tuple[str, str, float]]:
    """Edges as (source id, target id, weight), in edge order."""
    ids = data.ids.to_arrow().to_pylist()
    src, dst = data.graph.edges()
    weight = data.graph.edata["weight"].tolist()
    return [(ids[s], ids[d], w) for s, d, w in zip(src.tolist(), dst.tolist(), weight)]


@pytest.fixture
def triples() -> Callable[..., list[tuple[str, str, float]]]:
    return edge_triples
