import json
import os

import pytest

from graphflow.errors import DataError
from graphflow.io.atomic import atomic_path, write_json, write_text


def test_write_is_all_or_nothing(tmp_path):
    target = tmp_path / "a" / "result.txt"
    write_text(target, "first")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half-writ")
            raise RuntimeError("interrupted")
    assert target.read_text() == "first"
    assert sorted(os.listdir(target.parent)) == ["result.txt"]  # no temp file left


def test_temp_file_is_hidden_and_partial(tmp_path):
    with atomic_path(tmp_path / "x.parquet") as tmp:
        assert tmp.parent == tmp_path
        assert tmp.name.startswith(".x.parquet.") and tmp.name.endswith(".partial")
        tmp.write_text("ok")
    assert (tmp_path / "x.parquet").read_text() == "ok"


def test_write_json(tmp_path):
    write_json(tmp_path / "r.json", {"a": 1, "p": tmp_path})
    assert json.loads((tmp_path / "r.json").read_text()) == {"a": 1, "p": str(tmp_path)}


def test_folder_that_cannot_be_created(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(DataError, match=f"cannot create output folder {blocker}/sub"):
        write_text(blocker / "sub" / "out.txt", "x")
