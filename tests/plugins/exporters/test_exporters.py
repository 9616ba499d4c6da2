"""Each exporter on real artifacts from a short GCN run over string ids."""

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from graphflow.config import load_config
from graphflow.context import Artifacts, Stage
from graphflow.errors import ConfigError, DataError
from graphflow.manager import create_host
from graphflow.record import package_versions
from graphflow.runner import run_pipeline
from graphflow_plugins.exporters.tables import node_artifact, predictions_table

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "edgelist_gcn.toml"
EXPORTS = """
[[export]]
type = "parquet"
what = "predictions"
path = "out/pred.parquet"
row_group_size = 64
[[export]]
type = "parquet"
what = "logits"
path = "out/logits.parquet"
[[export]]
type = "npy"
what = "logits"
path = "out/logits.npy"
[[export]]
type = "pt"
what = "predictions"
path = "out/pred.pt"
[[export]]
type = "csv"
what = "predictions"
path = "out/pred.csv"
[[export]]
type = "csv"
what = "logits"
path = "out/logits.csv"
delimiter = "tab"
[[export]]
type = "dgl"
what = "logits"
path = "out/with_logits.bin"
[[export]]
type = "pt"
what = "graph"
path = "out/graph.pt"
ids = false
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The example pipeline (edge list + node table + GCN), 5 epochs, with every exporter."""
    folder = tmp_path_factory.mktemp("exports")
    text = EXAMPLE.read_text().split("[[export]]")[0].replace('"data/', f'"{EXAMPLE.parent}/data/')
    path = folder / "p.toml"
    path.write_text(text + EXPORTS)
    host = create_host()
    config = load_config(path, host.registry, overrides=["train.epochs=5"],
                         out_dir=folder / "run")
    return run_pipeline(config, host, quiet=True), folder / "out"


def test_parquet_predictions_carry_ids_classes_probability_and_metadata(run):
    result, out = run
    ctx = result.ctx
    pf = pq.ParquetFile(out / "pred.parquet")
    assert pf.metadata.num_row_groups == 3  # 150 rows, 64 per group
    table = pf.read()
    assert table.column_names == ["id", "prediction", "class", "probability"]
    ids = ctx.data.ids.to_arrow().to_pylist()
    assert table.column("id").to_pylist() == ids and ids[0].startswith("paper-")
    pred = ctx.artifacts.predictions
    assert table.column("prediction").to_pylist() == pred.tolist()
    classes = ctx.data.meta["classes"]
    assert table.column("class").to_pylist() == [classes[p] for p in pred.tolist()]
    prob = torch.softmax(ctx.artifacts.logits, 1).max(1).values
    assert np.allclose(table.column("probability").to_numpy(), prob.numpy())
    meta = json.loads(pf.schema_arrow.metadata[b"graphflow"])
    assert meta["pipeline"] == "edgelist_gcn" and meta["config_hash"] == ctx.config.digest()
    assert meta["versions"] == package_versions() and meta["classes"] == classes
    assert list(out.glob(".*partial")) == []


def test_vector_exports(run):
    result, out = run
    logits = result.ctx.artifacts.logits
    table = pq.read_table(out / "logits.parquet")
    assert table.schema.field("logits").type == pa.list_(pa.float32(), 3)
    assert np.allclose(np.stack(table.column("logits").to_numpy(zero_copy_only=False)),
                       logits.numpy())
    assert np.array_equal(np.load(out / "logits.npy"), logits.numpy())
    ids = np.load(out / "logits.ids.npy")
    assert ids.dtype.kind == "U" and ids[0] == result.ctx.data.ids.to_arrow()[0].as_py()
    lines = (out / "logits.csv").read_text().splitlines()
    assert lines[0] == '"id"\t"logits_0"\t"logits_1"\t"logits_2"' and len(lines) == 151


def test_pt_csv_and_dgl_exports(run):
    result, out = run
    ctx = result.ctx
    saved = torch.load(out / "pred.pt", weights_only=True)
    assert torch.equal(saved["predictions"], ctx.artifacts.predictions)
    assert saved["ids"] == ctx.data.ids.to_arrow().to_pylist()
    assert saved["info"]["config_hash"] == ctx.config.digest()
    graph = torch.load(out / "graph.pt", weights_only=True)
    assert graph["num_nodes"] == 150 and "ids" not in graph
    assert torch.equal(graph["ndata"]["feat"], ctx.data.graph.ndata["feat"])
    lines = (out / "pred.csv").read_text().splitlines()
    assert lines[0] == '"id","prediction","class","probability"'
    assert lines[1].startswith('"paper-0000",')
    from graphflow.io.dglfile import load_graph

    back = load_graph(out / "with_logits.bin")
    assert torch.equal(back.graph.ndata["logits"], ctx.artifacts.logits)
    assert back.ids.to_arrow().to_pylist() == ctx.data.ids.to_arrow().to_pylist()


def test_multilabel_predictions_are_list_columns():
    pred = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    logits = torch.tensor([[2.0, -1.0, 0.0], [-3.0, -3.0, -3.0], [-1.0, 1.0, -2.0]])
    table = predictions_table(pa.array(["u", "v", "w"]), pred, logits, ["a", "b", "c"])
    assert table.column("prediction").to_pylist() == [[0, 2], [], [1]]
    assert table.column("class").to_pylist() == [["a", "c"], [], ["b"]]
    prob = table.column("probability").to_pylist()
    assert np.allclose(prob[0], torch.sigmoid(torch.tensor([2.0, 0.0])).tolist())


def test_missing_artifact_and_unwritable_folder(run_toml, tmp_path):
    (tmp_path / "e.txt").write_text("a b\n")
    (tmp_path / "blocker").write_text("a file, not a folder")
    base = '[load]\ntype = "edgelist"\npath = "e.txt"\n[[export]]\ntype = "parquet"\n'
    with pytest.raises(ConfigError, match=r"\[export.0\] parquet: .*no 'predictions' artifact"):
        run_toml(base + 'what = "predictions"\npath = "p.parquet"\n')
    with pytest.raises(DataError, match=r"\[export.0\] parquet: cannot create output folder "
                                        r".*blocker/sub/g: Not a directory"):
        run_toml(base + 'what = "graph"\npath = "blocker/sub/g"\n')
    if Path("/proc").is_dir():  # exists, so no folder to create, but takes no new file
        with pytest.raises(DataError, match=r"^\[export.0\] pt: cannot write /proc/g.pt: "
                                            r"No such file or directory$"):
            run_toml(base.replace('"parquet"', '"pt"') + 'what = "graph"\npath = "/proc/g.pt"\n')
    with pytest.raises(DataError, match=r"\[export.0\] parquet: .*blocker is a file; for what = "
                                        r"\"graph\" the path is a folder that will hold "
                                        r"edges.parquet and nodes.parquet$"):
        run_toml(base + 'what = "graph"\npath = "blocker"\n')
    with pytest.raises(DataError, match=r"\[export.0\] csv: .*blocker is a file; for what = "
                                        r"\"graph\" the path is a folder that will hold "
                                        r"edges.csv and nodes.csv$"):
        run_toml(base.replace('"parquet"', '"csv"') + 'what = "graph"\npath = "blocker"\n')
    with pytest.raises(ConfigError, match=r'\[export.0\] npy: what = "graph" is not written by '
                                          r"this exporter; it writes: embeddings, predictions, "
                                          r"logits; exporters that write graph: csv, dgl, "
                                          r"parquet, pt$"):
        run_toml(base.replace('"parquet"', '"npy"') + 'what = "graph"\npath = "g.npy"\n')
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith("partial")) == []


def test_bad_exporter_options_are_named(run_toml, tmp_path):
    (tmp_path / "e.txt").write_text("a b\n")
    base = '[load]\ntype = "edgelist"\npath = "e.txt"\n[[export]]\nwhat = "graph"\n'
    with pytest.raises(ConfigError, match=r'delimiter = "auto" only makes sense when reading; '
                                          r'use "comma", "tab", "space" or one character'):
        run_toml(base + 'type = "csv"\ndelimiter = "auto"\n')
    with pytest.raises(ConfigError, match=r"row_group_size = 0: must be >= 1"):
        run_toml(base + 'type = "parquet"\nrow_group_size = 0\n')


def test_an_artifact_of_the_wrong_length_is_named(tiny_graph):
    ctx = SimpleNamespace(stage=Stage("export.0", "exporter", "npy", "graphflow"),
                          artifacts=Artifacts(embeddings=torch.zeros(5, 2)),
                          graph=lambda: tiny_graph)
    with pytest.raises(ConfigError, match=r"^\[export.0\] npy: the embeddings artifact has 5 rows "
                                          r"but the graph has 6 nodes; the task that made it "
                                          r"must return one row per node$"):
        node_artifact(ctx, "embeddings")
    ctx.artifacts.embeddings = torch.ones(6, 2)
    assert torch.equal(node_artifact(ctx, "embeddings"), torch.ones(6, 2))
