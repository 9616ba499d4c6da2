import os
from pathlib import Path

import pytest
import torch

from graphflow.errors import DataError
from graphflow_plugins.loaders.planetoid import PlanetoidLoader, dgl_folder_name, raw_files


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One cache folder per module, so DGL processes each dataset once."""
    return tmp_path_factory.mktemp("planetoid-cache")


def _toml(name: str, root: Path, cache: Path, extra: str = "") -> str:
    return f"""
[load]
type = "planetoid"
name = "{name}"
root = "{root}"
cache_dir = "{cache}"
{extra}
"""


def _stats(data):
    g = data.graph
    return (g.num_nodes(), g.num_edges(), g.ndata["feat"].shape[1], data.num_classes,
            [int(g.ndata[m].sum()) for m in ("train_mask", "val_mask", "test_mask")])


def test_cora_matches_dgl_statistics_offline(run_toml, planetoid_root, cache):
    before = sorted(os.listdir(planetoid_root))
    data = run_toml(_toml("cora", planetoid_root, cache)).ctx.data
    assert _stats(data) == (2708, 10556, 1433, 7, [140, 500, 1000])
    g = data.graph
    assert g.ndata["feat"].dtype == torch.float32 and g.ndata["label"].dtype == torch.int64
    assert g.ndata["train_mask"].dtype == torch.bool
    assert sorted(os.listdir(planetoid_root)) == before  # root is never written
    # DGL found our symlinked layout: it processed there and downloaded nothing.
    (raw_dir,) = [p for p in (cache / "planetoid").iterdir()]
    assert [p.name for p in raw_dir.iterdir()] == [dgl_folder_name("cora")]
    layout = raw_dir / dgl_folder_name("cora")
    assert (layout / "ind.cora_v2.x").resolve() == (planetoid_root / "ind.cora.x").resolve()
    assert (layout / "cora_v2_dgl_graph.bin").exists()


def test_citeseer_matches_published_statistics(run_toml, planetoid_root, cache):
    data = run_toml(_toml("citeseer", planetoid_root, cache)).ctx.data
    assert _stats(data) == (3327, 9104, 3703, 6, [120, 500, 1000])
    src, dst = data.graph.edges()
    assert not (src == dst).any()
    raw = run_toml(_toml("citeseer", planetoid_root, cache, "remove_self_loops = false"))
    assert raw.ctx.data.num_edges == 9228  # DGL's graph as is: 124 self-loops


def test_missing_files_say_which_files_and_which_folder(run_toml, tmp_path, cache):
    root = tmp_path / "raw"
    root.mkdir()
    (root / "ind.cora.x").write_bytes(b"")
    with pytest.raises(DataError) as info:
        run_toml(_toml("cora", root, cache, "download = false"))
    message = str(info.value)
    assert message.startswith("[load] planetoid: cora: root ")
    assert f"{root} lacks ind.cora.y, ind.cora.tx" in message
    assert f"put {', '.join(raw_files('cora'))} in {root}" in message


def test_check_for_validate(tmp_path):
    loader = PlanetoidLoader(PlanetoidLoader.Options(name="pubmed", root=tmp_path / "nope",
                                                     download=False))
    with pytest.raises(DataError, match=r"pubmed: root .*nope does not exist; put ind.pubmed.x"):
        loader.check()
    PlanetoidLoader(PlanetoidLoader.Options(root=tmp_path)).check()  # may download: fine


def test_no_files_and_no_network_says_where_to_put_them(run_toml, tmp_path, cache, monkeypatch):
    import dgl.data.dgl_dataset as dgl_dataset

    def offline(url, *args, **kwargs):
        raise ConnectionError(f"cannot reach {url}")

    monkeypatch.setattr(dgl_dataset, "download", offline)  # this machine, unplugged
    root = tmp_path / "empty"
    root.mkdir()
    with pytest.raises(DataError) as info:
        run_toml(_toml("cora", root, tmp_path / "cache"))
    message = str(info.value)
    assert "cora: download failed (ConnectionError: cannot reach https://" in message
    assert f"put {', '.join(raw_files('cora'))} in {root}" in message


def test_a_damaged_raw_file_is_named_instead_of_crashing_scipy(run_toml, tmp_path,
                                                                planetoid_root, cache):
    """Out-of-range column indices in ind.cora.x once made DGL's processing segfault
    (found by fuzzing); now the file is named."""
    import pickle
    import shutil

    root = tmp_path / "raw"
    root.mkdir()
    for name in raw_files("cora"):
        shutil.copy(planetoid_root / name, root / name)
    with open(root / "ind.cora.x", "rb") as fh:
        x = pickle.load(fh, encoding="latin1")
    x.indices[:3] = 10**6  # beyond the 1433 columns
    with open(root / "ind.cora.x", "wb") as fh:
        pickle.dump(x, fh)
    with pytest.raises(DataError, match=r"ind.cora.x is damaged \(ValueError: .*\); replace "
                                        r"it with the original Planetoid file"):
        run_toml(f'[load]\ntype = "planetoid"\nroot = "{root}"\ndownload = false\n'
                 f'cache_dir = "{cache}"\n')
