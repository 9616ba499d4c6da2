"""Which bundle of a run folder ``predict`` and ``serve`` take: the last stage's."""

import json

import pytest

from graphflow.bundle.layout import find_bundle
from graphflow.errors import DataError


def bundles(root, *folders):
    for name in folders:
        (root / name).mkdir()
        (root / name / "bundle.json").write_text("{}")


def test_the_last_stage_in_pipeline_order_without_a_record(tmp_path):
    bundles(tmp_path, "model-train.2", "model-train.10", "model-train.0")
    assert find_bundle(tmp_path).name == "model-train.10"  # 10 after 2, not before
    assert find_bundle(tmp_path, "train.2").name == "model-train.2"


def test_the_last_bundle_the_run_wrote_wins_over_a_stale_one(tmp_path):
    bundles(tmp_path, "model-train.0", "model-train.1", "model-train.2")  # .2: an older run's
    record = {"outputs": [{"path": str(tmp_path / "model-train.0"), "what": "model bundle"},
                          {"path": str(tmp_path / "model-train.1"), "what": "model bundle"},
                          {"path": str(tmp_path / "run.json"), "what": "record"}]}
    (tmp_path / "run.json").write_text(json.dumps(record))
    assert find_bundle(tmp_path).name == "model-train.1"


def test_a_stage_without_a_bundle_lists_those_with_one(tmp_path):
    bundles(tmp_path, "model-train.0", "model-train.1")
    with pytest.raises(DataError, match=r"no model bundle of stage 'train\.3' "
                                        r"\(model-train\.3/bundle\.json is missing\); stages "
                                        r"with one: train\.0, train\.1$"):
        find_bundle(tmp_path, "train.3")
