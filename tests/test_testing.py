"""graphflow.testing: the shared-data lookup that tests and plugin authors use."""

from __future__ import annotations

import pytest

from graphflow import testing
from graphflow.testing import DATA_ENV, PLANETOID_ENV, REPO_ROOT, shared_data


@pytest.fixture
def no_data_env(monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.delenv(PLANETOID_ENV, raising=False)


def test_the_default_data_folder_is_shared_data_beside_the_repo(no_data_env):
    assert testing.data_dir() == REPO_ROOT.parent / "shared" / "data"
    assert testing.planetoid_dir() == REPO_ROOT.parent / "shared" / "data" / "planetoid"


def test_graphflow_data_dir_moves_every_data_set(monkeypatch, no_data_env, tmp_path):
    (tmp_path / "mutag").mkdir()
    (tmp_path / "mutag" / "MUTAG.mat").write_bytes(b"x")
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    assert shared_data("mutag") == tmp_path / "mutag"
    assert testing.planetoid_dir() == tmp_path / "planetoid"


def test_graphflow_planetoid_dir_still_wins_for_planetoid(monkeypatch, no_data_env, tmp_path):
    (tmp_path / "ind.cora.x").write_bytes(b"x")
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "elsewhere"))
    monkeypatch.setenv(PLANETOID_ENV, str(tmp_path))
    assert shared_data("planetoid") == tmp_path
    assert testing.planetoid_dir() == tmp_path


def test_an_absent_data_set_skips_naming_the_folder_and_the_variable(monkeypatch, no_data_env,
                                                                     tmp_path):
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    with pytest.raises(pytest.skip.Exception) as info:
        shared_data("aifb")
    reason = str(info.value)
    assert f'shared data set "aifb": {tmp_path / "aifb"} not found' in reason
    assert DATA_ENV in reason


def test_a_folder_without_the_expected_files_skips_naming_them(monkeypatch, no_data_env, tmp_path):
    (tmp_path / "planetoid").mkdir()
    (tmp_path / "planetoid" / "README.md").write_text("files not copied")
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    with pytest.raises(pytest.skip.Exception) as info:
        shared_data("planetoid")
    assert "ind.cora.x not found in" in str(info.value)
    assert PLANETOID_ENV in str(info.value)


def test_files_asked_for_are_checked(monkeypatch, no_data_env, tmp_path):
    (tmp_path / "custom").mkdir()
    (tmp_path / "custom" / "a.txt").write_text("a")
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    assert shared_data("custom") == tmp_path / "custom"
    assert shared_data("custom", "a.txt") == tmp_path / "custom"
    with pytest.raises(pytest.skip.Exception, match="b.txt not found"):
        shared_data("custom", "a.txt", "b.txt")


def test_an_empty_folder_of_an_unknown_data_set_skips(monkeypatch, no_data_env, tmp_path):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match="empty is empty"):
        shared_data("empty")


@pytest.mark.parametrize("name, file", [("mutag", "MUTAG.mat"), ("aifb", "trainingSet.tsv")])
def test_the_fixture_finds_the_shared_copies(shared_data, name, file):
    # Skips (saying where it looked) on a machine without ../shared/data.
    assert (shared_data(name) / file).is_file()


def test_planetoid_root_is_the_shared_planetoid_folder(planetoid_root):
    assert (planetoid_root / "ind.cora.x").is_file()
