from pathlib import Path

import torch

from graphflow.io.plain import plain


def test_plain_keeps_json_values_and_writes_the_rest_as_text(tmp_path):
    value = {1: (2, "a", None), "path": Path("x/y"), "dtype": torch.float32,
             "nested": {"ok": [True, 1.5]}}
    out = plain(value)
    assert out == {"1": [2, "a", None], "path": "x/y", "dtype": "torch.float32",
                   "nested": {"ok": [True, 1.5]}}
    torch.save(out, tmp_path / "m.pt")  # what weights_only loading accepts
    assert torch.load(tmp_path / "m.pt", weights_only=True) == out
