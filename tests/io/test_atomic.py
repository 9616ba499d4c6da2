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


@pytest.fixture
def umask():
    """Set the process umask for one test, restored after."""
    saved = os.umask(0o022)
    os.umask(saved)
    yield os.umask
    os.umask(saved)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_get_the_umask_mode_not_mkstemp_s(tmp_path, umask, mask, mode):
    umask(mask)
    write_text(tmp_path / "a.txt", "x")
    with atomic_path(tmp_path / "b.bin") as tmp:
        tmp.write_bytes(b"y")
    assert oct((tmp_path / "a.txt").stat().st_mode & 0o777) == oct(mode)
    assert oct((tmp_path / "b.bin").stat().st_mode & 0o777) == oct(mode)


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_a_folder_is_replaced_whole_with_the_umask_modes(tmp_path, umask, mask):
    from graphflow.io.atomic import atomic_dir

    umask(mask)
    target = tmp_path / "bundle"
    with atomic_dir(target) as tmp:
        (tmp / "sub").mkdir()
        (tmp / "sub" / "w.pt").write_bytes(b"1")
        (tmp / "meta.json").write_text("{}")
    with pytest.raises(RuntimeError):
        with atomic_dir(target) as tmp:
            (tmp / "meta.json").write_text("half")
            raise RuntimeError("interrupted")
    assert (target / "meta.json").read_text() == "{}"
    assert sorted(os.listdir(tmp_path)) == ["bundle"]
    modes = {p.relative_to(target).as_posix(): p.stat().st_mode & 0o777
             for p in [target, *target.rglob("*")]}
    files, folders = 0o666 & ~mask, 0o777 & ~mask
    assert modes == {".": folders, "sub": folders, "sub/w.pt": files, "meta.json": files}


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_every_file_of_a_small_run_has_the_umask_mode(run_toml, tmp_path, umask, mask):
    umask(mask)
    result = run_toml("""
[pipeline]
name = "modes"
seed = 0
[load]
type = "synthetic"
nodes = 60
classes = 2
features = 4
[model]
type = "gcn"
hidden = 8
[train]
type = "node_classification"
epochs = 2
[[export]]
type = "parquet"
what = "predictions"
[[export]]
type = "parquet"
what = "logits"
[[export]]
type = "pt"
what = "model"
""")
    out = result.out_dir
    found = {p.relative_to(out).as_posix(): p.stat().st_mode & 0o777
             for p in out.rglob("*")}
    for name in ("predictions.parquet", "logits.parquet", "run.json", "checkpoint.pt",
                 "model.pt", "model/bundle.json", "model/model.pt", "model"):
        assert name in found, sorted(found)
    want_file, want_dir = 0o666 & ~mask, 0o777 & ~mask
    wrong = {name: oct(m) for name, m in found.items()
             if m != (want_dir if (out / name).is_dir() else want_file)}
    assert not wrong, wrong
