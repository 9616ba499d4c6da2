"""benchmarks/op_shares.py: a pipeline's operators by self time, and the dense products' share."""

from __future__ import annotations

import re

from benchmarks import op_shares
from graphflow.testing import node_pipeline


def test_a_tiny_run_lists_operators_and_the_dense_products_share(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(node_pipeline(epochs=2))
    assert op_shares.main([str(path), "--threads", "1", "--top", "5"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("aten::")]
    assert 1 <= len(rows) <= 5
    share = re.search(r"dense products: ([0-9.]+)% of all", out)
    assert share and 0.0 < float(share.group(1)) < 100.0, out
