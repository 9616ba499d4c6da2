"""``--nproc 2`` for link prediction and the graph tasks (two workers, gloo over loopback),
against one process; the typed node task refused when the pipeline is read."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from graphflow.config import load_config
from graphflow.distributed.world import World, check_data_parallel
from graphflow.errors import ConfigError
from graphflow.testing import REPO_ROOT

LINKS = """
[pipeline]
name = "links"
seed = 0
device = "cpu"

[load]
type = "synthetic"
nodes = 200
classes = 4
features = 8
p_in = 0.08
p_out = 0.004
signal = 0.8

[[transform]]
type = "link_split"
val = 0.1
test = 0.1

[model]
type = "gcn"
hidden = 16
dropout = 0.0

[[train]]
type = "link_prediction"
embedding_dim = 16
epochs = 20
lr = 0.02
decoder = "mlp"
eval_negatives = 20
hits_at = [1, 10]
checkpoint = false

[[train]]
type = "link_prediction"
embedding_dim = 16
epochs = 4
lr = 0.02
eval_negatives = 20
hits_at = [1, 10]
checkpoint = false

[train.sample]
type = "neighbor"
fanouts = [5, 5]
batch_size = 128
prefetch = 0

[[export]]
type = "parquet"
what = "embeddings"
"""

GRAPHS = f"""
[pipeline]
name = "graphs"
seed = 0
device = "cpu"

[load]
type = "tu"
path = "{(REPO_ROOT / "examples" / "data" / "rings_paths").as_posix()}"
name = "RP"
features = "degree"

[model]
type = "gin"
hidden = 16
layers = 2
norm = "batch"
dropout = 0.0

[train]
type = "graph_classification"
epochs = 15
batch_size = 5
hidden = 16
folds = 3
val_fraction = 0.2
checkpoint = false

[train.cores]
threads = 1

[[export]]
type = "parquet"
what = "predictions"
"""


def _record(out: Path) -> dict:
    return json.loads((out / "run.json").read_text())


def _two(tmp_path: Path, spawn, text: str) -> dict:
    """Run ``text`` on two workers; its run record."""
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(text)
    done = spawn(["-m", "graphflow", "run", pipeline, "--nproc", "2", "--quiet", "--out-dir",
                  tmp_path / "two"], timeout=150)
    assert done.returncode == 0, done.stderr
    rec = _record(tmp_path / "two")
    assert (rec["status"], rec["world_size"], rec["backend"]) == ("ok", 2, "gloo")
    for section, digests in rec["replica_digests"].items():
        assert len(digests) == 2 and digests[0] == digests[1], section  # DDP kept them equal
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("run.json")) == \
        [Path("one/run.json"), Path("two/run.json")]  # rank 0 alone writes
    return rec


def _epochs(out: Path, stage: str) -> list[dict]:
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    return [x for x in lines if x["stage"] == stage]


def test_link_prediction_full_batch_and_sampled_on_two_processes(tmp_path, run_toml, spawn):
    one = run_toml(LINKS, out_dir=tmp_path / "one").record["metrics"]
    rec = _two(tmp_path, spawn, LINKS)
    assert set(rec["replica_digests"]) == {"train.0", "train.1"}
    # Each rank trains on half the positive edges (full batch: the loss over its half;
    # sampled: half the batches, with negatives of its own); 44 validation and test pairs.
    # train.0 (full batch, mlp decoder): its last validation figure; train.1 (sampled): the
    # run's final figures.
    full = [_epochs(out, "train.0") for out in (tmp_path / "one", tmp_path / "two")]
    assert [x["epoch"] for x in full[1]] == list(range(1, 21))
    assert abs(full[1][-1]["val_auc"] - full[0][-1]["val_auc"]) <= 0.05
    assert full[1][-1]["val_auc"] > 0.75
    assert abs(rec["metrics"]["test_auc"] - one["test_auc"]) <= 0.05
    assert rec["metrics"]["test_auc"] > 0.75
    assert pq.read_table(tmp_path / "two" / "embeddings.parquet").num_rows == 200


def test_graph_classification_folds_on_two_processes(tmp_path, run_toml, spawn):
    one = run_toml(GRAPHS, out_dir=tmp_path / "one").record["metrics"]
    rec = _two(tmp_path, spawn, GRAPHS)
    # One DDP model per fold, batch-norm statistics included, equal on both ranks.
    assert set(rec["replica_digests"]) == {"train.fold0", "train.fold1", "train.fold2"}
    two = rec["metrics"]
    # The same batches as one process, each split across the ranks: the same figures
    # within one of the 24 graphs.
    assert abs(two["cv_strict_acc"] - one["cv_strict_acc"]) <= 1 / 8 + 1e-9
    assert two["cv_gin_acc"] >= 0.9
    table = pq.read_table(tmp_path / "two" / "predictions.parquet")
    assert table.num_rows == 24 and sorted(table.column("id").to_pylist()) == list(range(1, 25))
    folds = json.loads((tmp_path / "two" / "folds-train.json").read_text())
    assert sorted(folds) == ["0", "1", "2"]


def test_each_rank_takes_its_part_of_every_batch():
    ids = torch.arange(100, 169)  # 69 graphs in batches of 32: 32, 32, 5
    for size in (2, 3):
        parts = [World(rank=r, size=size, backend="gloo").shard_batches(ids, 32)
                 for r in range(size)]
        per = parts[0][1]
        assert per == -(-32 // size)
        cut = [mine.split(per) for mine, _ in parts]
        assert {len(c) for c in cut} == {3}  # every rank steps as often
        for b, batch in enumerate(ids.split(32)):
            got = torch.cat([c[b] for c in cut])
            assert set(got.tolist()) == set(batch.tolist())  # one process's batch, shared
            assert got.numel() - batch.numel() < size  # padded by at most size - 1
    # a single process shuffles as GraphBatcher.epoch does, and cuts the same batches
    gen, ref = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    mine, per = World().shard_batches(ids, 32, gen)
    assert per == 32 and torch.equal(mine, ids[torch.randperm(69, generator=ref)])


TYPED = """
[load]
type = "networkx"
graph = "karate_club"

[model]
type = "{model}"

[train]
type = "node_classification"
"""


@pytest.mark.parametrize("model", ["rgcn", "hetero"])
def test_typed_node_classification_is_refused_before_any_worker(cli, tmp_path, model,
                                                                 monkeypatch, host):
    import torch.distributed.run

    started = []
    monkeypatch.setattr(torch.distributed.run, "run", lambda *a, **k: started.append(a))
    path = tmp_path / "typed.toml"
    path.write_text(TYPED.format(model=model))
    line = ("graphflow: error: [train] node_classification cannot run data-parallel (--nproc): "
            "node classification on a typed graph trains in one process; drop --nproc")
    for command in ("validate", "run"):
        code, out, err = cli(command, path, "--nproc", "2", "--out-dir", tmp_path / "o")
        assert code == 1 and err.strip() == line, err
    assert not started and not (tmp_path / "o").exists()  # no worker, no data, no output
    # graphflow launch and each worker check the same before anything starts
    config = load_config(path, host.registry)
    check_data_parallel(config, 1)  # one process: fine
    with pytest.raises(ConfigError) as info:
        check_data_parallel(config, 3)
    assert f"graphflow: error: {info.value}" == line
