"""benchmarks/records.py: alternating repetitions, medians with their spread, and the records
figures are made from."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import records  # noqa: E402


def test_the_order_of_the_peers_is_reversed_every_other_repetition():
    assert records.orders(["a", "b"], 4) == [["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]]
    calls = []
    times = records.alternate({"a": lambda rep: calls.append(("a", rep)),
                               "b": lambda rep: calls.append(("b", rep))}, 3,
                              measure=lambda fn, rep: (fn(rep), 1.0 + rep)[1])
    assert calls == [("a", 0), ("b", 0), ("b", 1), ("a", 1), ("a", 2), ("b", 2)]
    assert times == {"a": [1.0, 2.0, 3.0], "b": [1.0, 2.0, 3.0]}


def test_spread_is_the_median_and_range_of_every_repetition():
    assert records.spread([3.0, 1.0, 2.0, 10.0]) == {"median": 2.5, "min": 1.0, "max": 10.0,
                                                     "n": 4}
    r = records.ratio_spread([4.0, 6.0, 8.0], [2.0, 2.0, 4.0])
    assert r == {"median": 3.0, "min": 2.0, "max": 3.0, "n": 3}
    with pytest.raises(ValueError):
        records.ratio_spread([1.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        records.spread([])


def test_a_record_holds_the_command_commit_machine_load_and_every_repetition(tmp_path):
    result = {"epoch_s_all": {"graphflow": [1.0, 1.2], "dgl": [2.0, 2.2]}, "ratio": 1.82}
    path = records.write("demo", result, load_before=0.5, folder=tmp_path,
                         argv=[str(ROOT / "benchmarks" / "demo.py"), "--epochs", "2"])
    data = json.loads(path.read_text())
    assert data["command"] == "python benchmarks/demo.py --epochs 2"
    assert len(data["commit"]) == 40 and isinstance(data["dirty"], bool)
    assert data["machine"]["cpu"]["model_name"] and data["machine"]["versions"]["torch"]
    assert data["load_before"] == 0.5 and data["result"] == result
    assert records.read("demo", folder=tmp_path) == [data]


def test_fair_only_re_exports_the_records_helpers():
    from benchmarks import fair

    assert fair.race is records.race and fair.line is records.line
    assert fair.is_alternating is records.is_alternating and fair.Race is records.Race
