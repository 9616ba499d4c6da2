import errno
import json
import os
import sys

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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
def test_folder_that_takes_no_new_file_names_the_target():
    with pytest.raises(DataError, match=r"^cannot write /proc/x\.parquet: "):
        write_text("/proc/x.parquet", "x")  # /proc exists (so no mkdir) but takes no files


def test_a_full_disk_names_the_target_and_leaves_no_partial_file(tmp_path):
    target = tmp_path / "out.parquet"
    with pytest.raises(DataError, match=f"^cannot write {target}: No space left on device$"):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # what write() raises
    assert os.listdir(tmp_path) == []


def test_other_errors_inside_pass_through(tmp_path):
    with pytest.raises(PermissionError):
        with atomic_path(tmp_path / "out.txt"):
            raise PermissionError(errno.EACCES, "a writer's own error")
    assert os.listdir(tmp_path) == []
