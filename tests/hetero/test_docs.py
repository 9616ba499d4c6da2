"""The code example of docs/heterogeneous.md that builds a typed graph runs as written."""

import re
from pathlib import Path

DOC = (Path(__file__).resolve().parents[2] / "docs" / "heterogeneous.md").read_text()


def test_typed_graph_example_runs():
    code = next(b for b in re.findall(r"```python\n(.*?)```", DOC, re.S) if "typed_graph(" in b)
    namespace: dict = {}
    exec(compile(code, "docs/heterogeneous.md", "exec"), namespace)
    data = namespace["data"]
    assert data.is_typed and sorted(data.graph.ntypes) == ["item", "user"]
    assert ("item", "rev-clicks", "user") in data.graph.canonical_etypes
