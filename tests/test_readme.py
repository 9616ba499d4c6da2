"""The README's pipeline example is a real pipeline: every key in it is one graphflow accepts."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_pipeline_validates(cli, planetoid_root, tmp_path):
    block = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)[0]
    assert '[load]' in block and 'root = "../../shared/data/planetoid"' in block
    path = tmp_path / "pipeline.toml"
    path.write_text(block.replace("../../shared/data/planetoid", planetoid_root.as_posix()))
    code, out, err = cli("validate", path)
    assert code == 0, err
    assert "transform.0:normalize_features" in out and "train:node_classification" in out
