"""The code examples of docs/plugins.md run as written: the APPNP model and the JSON-lines
loader, registered as plugins and used in pipelines."""

import re
import types
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from graphflow.manager import create_host

DOC = (Path(__file__).resolve().parents[1] / "docs" / "plugins.md").read_text()


def example(name: str) -> types.ModuleType:
    """The python block after ``<!-- example: NAME -->``, as a module."""
    code = re.search(rf"<!-- example: {name} -->\n```python\n(.*?)```", DOC, re.S).group(1)
    module = types.ModuleType(f"docs_example_{name.replace('-', '_')}")
    exec(compile(code, f"docs/plugins.md ({name})", "exec"), module.__dict__)
    return module


def test_appnp_example_trains(run_toml):
    host = create_host(plugins={"appnp_doc": example("appnp")})
    result = run_toml('[load]\ntype = "synthetic"\nnodes = 120\nclasses = 2\nfeatures = 8\n'
                      '[model]\ntype = "appnp"\nk = 3\n'
                      '[train]\ntype = "node_classification"\nepochs = 20\n', host=host)
    assert result.record["metrics"]["test_acc"] > 0.6
    assert result.ctx.artifacts.logits.shape == (120, 2)


def test_jsonl_loader_example_loads(run_toml, tmp_path):
    (tmp_path / "edges.jsonl").write_text('{"src": "a", "dst": "b", "weight": 2.0}\n'
                                          '{"src": "b", "dst": "c", "weight": 0.5}\n')
    pq.write_table(pa.table({"id": ["c", "b", "a"], "label": ["x", "y", "x"]}),
                   tmp_path / "nodes.parquet")
    host = create_host(plugins={"jsonl_doc": example("jsonl-loader")})
    data = run_toml('[load]\ntype = "jsonl_edges"\npath = "edges.jsonl"\n'
                    'nodes = "nodes.parquet"\n', host=host).ctx.data
    assert data.ids.to_arrow().to_pylist() == ["c", "b", "a"]
    assert data.graph.edges()[0].tolist() == [2, 1]
    assert data.graph.edata["weight"].tolist() == [2.0, 0.5]
    assert data.meta["classes"] == ["x", "y"]
