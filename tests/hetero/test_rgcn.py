"""Node classification on a typed graph with type = "rgcn": training, exports with each type's
original ids, and the bad-input messages."""

import pyarrow.parquet as pq
import pytest

from graphflow.errors import ConfigError, DataError


def pipeline(model="rgcn", target='"paper"', load="", model_extra="", train_extra=""):
    return f"""
[pipeline]
cores = 1
[load]
type = "typed_test"
{load}
[model]
type = "{model}"
{model_extra}
[train]
type = "node_classification"
target = {target}
epochs = 30
lr = 0.05
{train_extra}
[[export]]
type = "parquet"
what = "predictions"
"""


@pytest.mark.parametrize("regularizer", ["basis", "bdd", "none"])
def test_rgcn_learns_the_target_type(run_toml, typed_host, regularizer):
    extra = f'regularizer = "{regularizer}"\nnum_bases = 2'
    result = run_toml(pipeline(model_extra=extra), host=typed_host)
    m = result.ctx.metrics
    assert m["train_acc"] > 0.9 and m["test_acc"] > 0.6  # 3 classes
    table = pq.read_table(result.out_dir / "predictions.parquet")
    assert table.num_rows == 60  # one row per paper
    assert table.column("id").to_pylist()[:3] == ["p0", "p1", "p2"]


def test_rgcn_refuses_a_homogeneous_graph(run_toml):
    with pytest.raises(ConfigError, match='needs a typed graph.*use type = "gcn"'):
        run_toml('[load]\ntype = "synthetic"\nnodes = 20\nfeatures = 3\n[model]\n'
                 'type = "rgcn"\n[train]\ntype = "node_classification"\nepochs = 1\n')


def test_homogeneous_model_on_a_typed_graph(run_toml, typed_host):
    with pytest.raises(ConfigError, match='use type = "rgcn", or type = "hetero" with layer '
                                          '= "gcn"'):
        run_toml(pipeline(model="gcn"), host=typed_host)


def test_target_without_labels(run_toml, typed_host):
    with pytest.raises(DataError, match='target = "author": that node type has no labels'):
        run_toml(pipeline(target='"author"'), host=typed_host)


def test_unknown_target_lists_the_types(run_toml, typed_host):
    with pytest.raises(ConfigError, match="node types: paper, author, venue|node types: "):
        run_toml(pipeline(target='"papers"'), host=typed_host)


def test_no_labelled_type(run_toml, typed_host):
    with pytest.raises(ConfigError, match="labels on the node types: none"):
        run_toml(pipeline(target='"paper"', load="drop_labels = true").replace(
            'target = "paper"', ""), host=typed_host)


def test_differing_widths_without_projection(run_toml, typed_host):
    with pytest.raises(ConfigError, match='input widths .* project = "none"'):
        run_toml(pipeline(model_extra='project = "none"'), host=typed_host)


def test_typed_tables_example_trains(run_toml):
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    text = (examples / "typed_tables.toml").read_text().replace(
        '"data/typed/', f'"{examples}/data/typed/')
    result = run_toml(text, overrides=["pipeline.cores=1", "train.epochs=30"])
    assert result.ctx.metrics["test_acc"] > 0.6  # 3 classes
    table = pq.read_table(result.out_dir / "predictions.parquet")
    assert table.num_rows == 120  # one row per paper
