"""Every first-party task × every run-level feature, on tiny graphs (graphflow.capabilities).

One parametrized test over the cells of :func:`graphflow.capabilities.table`: a ✓ cell trains
and checks the output (predict and serve reproduce the run's predictions, ONNX and TorchScript
exports its outputs, a resumed run finishes what SIGTERM stopped...); a ✗ cell is refused by
``graphflow validate`` and ``graphflow run`` in its documented line before anything runs; a
cell being built is an expected failure with its reason; a cell that does not apply checks
the fact its reason states. ``docs/capabilities.md`` must equal what the table generates.

Runs are shared: one base run per row (module cache) holds the exports, the bundle and the
tracker that many cells read; the expensive cells (``--nproc``, sweep, SIGTERM) run once per
row on 3-epoch runs of a hundred-odd nodes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import torch
from torch import nn

from graphflow import capabilities
from graphflow.api import Model, hookimpl, option, spmm
from graphflow.capabilities import FEATURES, ROWS

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DATA = EXAMPLES / "data"

# --- the rows' tiny pipelines ---------------------------------------------------------------

SBM = """[load]
type = "synthetic"
kind = "sbm"
nodes = 120
classes = 3
features = 8
p_in = 0.08
p_out = 0.01
train = 0.4
val = 0.2
test = 0.4
"""
LINKS = """[load]
type = "synthetic"
nodes = 120
classes = 3
features = 8
[[transform]]
type = "link_split"
val = 0.1
test = 0.1
"""
BOND_TYPES = f"""[load]
type = "tu"
path = "{(DATA / 'bond_types').as_posix()}"
name = "BT"
features = "labels"
"""
BOND_ENERGIES = f"""[load]
type = "tu"
path = "{(DATA / 'bond_energies').as_posix()}"
name = "BE"
features = "labels"
targets = "attributes"
"""
KG_DIR = Path(tempfile.gettempdir()) / f"graphflow-composition-kg-{os.getpid()}"
"""A 12-entity ring of ``next`` / ``prev`` triples (written, then removed, by ``runs``)."""
KG = f"""[load]
type = "triples"
path = "{KG_DIR.as_posix()}"
"""
KARATE = """[load]
type = "networkx"
graph = "karate_club"
"""


def typed_load(example: str = "typed_tables.toml", end: str = "[[transform]]") -> str:
    """The data sections of an example (up to ``end``) with absolute paths."""
    text = (EXAMPLES / example).read_text()
    load = text[text.index("[load]"):text.index(end)]
    return load.replace('path = "data/', f'path = "{DATA.as_posix()}/')


@dataclass(frozen=True)
class Setup:
    """How a row's pipelines are written."""

    load: str
    model: str
    train: str
    sample: str = ""
    tiny_model: str = '[model]\ntype = "tiny_conv"\nhidden = 8\n'
    sample_to_add: str = '[sample]\ntype = "neighbor"\nfanouts = [4, 4]\nbatch_size = 32\n'
    metric: str = "val_acc"
    direction: str = "maximize"


SAMPLE = '[sample]\ntype = "neighbor"\nfanouts = [4, 4]\nbatch_size = 32\n'
GRAPH_TRAIN = "batch_size = 16\nhidden = 8\nsplit = [0.5, 0.25, 0.25]\n"
SETUPS: dict[str, Setup] = {
    "node": Setup(SBM, '[model]\ntype = "gcn"\nhidden = 8\n',
                  'type = "node_classification"\n'),
    "node_sampled": Setup(SBM, '[model]\ntype = "sage"\nhidden = 8\n',
                          'type = "node_classification"\n', sample=SAMPLE),
    "node_typed": Setup(typed_load(), '[model]\ntype = "rgcn"\nhidden = 8\n',
                        'type = "node_classification"\ntarget = "paper"\n',
                        tiny_model='[model]\ntype = "hetero"\nlayer = "tiny_conv"\nhidden = 8\n',
                        sample_to_add='[sample]\ntype = "typed_neighbor"\nfanouts = [4, 4]\n'
                                      'batch_size = 32\n'),
    "link": Setup(LINKS, '[model]\ntype = "gcn"\nhidden = 8\n',
                  'type = "link_prediction"\n', metric="val_auc"),
    "link_typed": Setup(typed_load("typed_link_prediction.toml", "[model]"),
                        '[model]\ntype = "rgcn"\nhidden = 8\n',
                        'type = "link_prediction"\ndecoder = "distmult"\nembedding_dim = 8\n',
                        tiny_model='[model]\ntype = "hetero"\nlayer = "tiny_conv"\nhidden = 8\n',
                        metric="val_auc"),
    "graph_cls": Setup(BOND_TYPES, '[model]\ntype = "gin"\nlayers = 2\nhidden = 8\n',
                       'type = "graph_classification"\n' + GRAPH_TRAIN, metric="val_acc"),
    "graph_reg": Setup(BOND_ENERGIES, '[model]\ntype = "gin"\nlayers = 2\nhidden = 8\n',
                       'type = "graph_regression"\n' + GRAPH_TRAIN, metric="val_mae",
                       direction="minimize"),
    "skipgram": Setup(KARATE, "", 'type = "skipgram"\ndim = 8\nwindow = 3\n'
                      "batch_size = 16\n",
                      sample='[sample]\ntype = "deepwalk"\nwalk_length = 10\nwalks_per_node = 4\n',
                      metric="skipgram_loss", direction="minimize"),
    "kg": Setup(KG, '[model]\ntype = "distmult"\ndim = 8\ngamma = 4.0\n',
                'type = "kg_completion"\nbatch_size = 8\nnegatives = 4\n',
                metric="test_mrr"),  # its runs report no validation figure to sweep on
}
ROW = {r.key: r for r in ROWS}
EXPORTS = {"onnx": '[[export]]\ntype = "onnx"\n',
           "torchscript": '[[export]]\ntype = "torchscript"\n',
           "embeddings": '[[export]]\ntype = "parquet"\nwhat = "embeddings"\n',
           "predictions": '[[export]]\ntype = "parquet"\nwhat = "predictions"\n'}
TRACK = '[[track]]\ntype = "tensorboard"\n'


def cell_of(key: str, feature: str) -> capabilities.Cell:
    return capabilities.cell(ROW[key], feature)


def pipeline(key: str, *, model: str | None = None, sample: str | None = None,
             train: str = "", exports: tuple[str, ...] | None = None, track: bool | None = None,
             extra: str = "", epochs: int = 2) -> str:
    """The row's pipeline; by default with every export and the tracker its ✓ cells read."""
    s = SETUPS[key]
    if exports is None:
        exports = tuple(f for f in EXPORTS if cell_of(key, f).status == "yes")
    if track is None:
        track = cell_of(key, "tracker").status == "yes"
    parts = ['[pipeline]\nname = "%s"\nseed = 0\ndevice = "cpu"\n' % key, s.load,
             s.sample if sample is None else sample, s.model if model is None else model,
             f"[train]\n{s.train}epochs = {epochs}\n{train}"]
    if ROW[key].task == "link_prediction":
        parts.append('[[export]]\ntype = "parquet"\nwhat = "links"\n')
    parts += [EXPORTS[f] for f in exports]
    if track:
        parts.append(TRACK)
    return "\n".join(parts) + extra


# --- a third-party model --------------------------------------------------------------------

class TinyConvModule(nn.Module):
    """Mean of the in-neighbours, then a Linear, ``layers`` times (no self term: it also runs
    as a per-relation layer of ``hetero``, where sources and destinations differ)."""

    def __init__(self, in_dim: int, hidden: int, out_dim: int, layers: int):
        super().__init__()
        widths = [in_dim] + [hidden] * (layers - 1) + [out_dim]
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
        self.num_layers = layers

    def forward(self, adj: Any, x: torch.Tensor) -> torch.Tensor:
        adjs = adj if isinstance(adj, list) else [adj] * self.num_layers
        for i, (a, lin) in enumerate(zip(adjs, self.lins)):
            x = lin(spmm(a, x, reduce="mean"))  # (num_dst, width)
            if i < self.num_layers - 1:
                x = torch.relu(x)
        return x

    def inference(self, adj: Any, x: torch.Tensor, *, batch_size: int, device: Any = None,
                  progress: Any = None, layers: int | None = None) -> torch.Tensor:
        """The contract's layer-wise inference; a model this small does it in one batch."""
        with torch.no_grad():
            return self.forward(adj, x)


class TinyConv(Model):
    """A third-party model: mean aggregation and a Linear per layer."""

    name = "tiny_conv"
    summary = "a plugin's two-layer mean-aggregation GNN"

    @dataclass
    class Options:
        hidden: int = option(8, "hidden width")
        layers: int = option(2, "message-passing layers")
        dropout: float = option(0.0, "unused")

    def build(self, in_dim: int, out_dim: int) -> nn.Module:
        return TinyConvModule(in_dim, self.options.hidden, out_dim, self.options.layers)


class ThirdParty:
    @hookimpl
    def graphflow_register_models(self, register):
        register(TinyConv)


class StopAfterFirstEpoch:
    """Sends this process SIGTERM at the end of epoch 1 (as ``kill -TERM`` would)."""

    @hookimpl
    def graphflow_epoch_end(self, ctx, stage, epoch, metrics):
        if epoch == 1:
            os.kill(os.getpid(), signal.SIGTERM)


# --- the shared runs ------------------------------------------------------------------------

class Runs:
    """Runs shared by the cells: each made once, on first use."""

    def __init__(self, root: Path):
        self.root = root
        self.cache: dict[Any, Any] = {}

    def write(self, name: str, text: str) -> Path:
        path = self.root / f"{name}.toml"
        path.write_text(text)
        return path

    def run(self, name: str, text: str, *, host: Any = None, resume: bool = False) -> Any:
        """Run ``text`` in-process into ``root/name``; the RunResult, or the exception."""
        from graphflow.config import load_config
        from graphflow.manager import create_host
        from graphflow.runner import run_pipeline
        from graphflow.runtime.signals import Terminated

        key = ("run", name, resume)
        if key not in self.cache:
            host = host or create_host()
            config = load_config(self.write(name, text), host.registry,
                                 out_dir=self.root / name)
            try:
                self.cache[key] = run_pipeline(config, host, quiet=True, resume=resume)
            except (Exception, Terminated) as exc:  # noqa: BLE001: the cell decides
                self.cache[key] = exc
        return self.cache[key]

    def base(self, key: str) -> Any:
        result = self.run(key, pipeline(key))
        if isinstance(result, Exception):
            raise result
        return result


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Runs:
    ring = "".join(f"e{i}\tnext\te{(i + 1) % 12}\ne{i}\tprev\te{(i - 1) % 12}\n"
                   for i in range(12))
    KG_DIR.mkdir(exist_ok=True)
    (KG_DIR / "train.txt").write_text(ring)
    (KG_DIR / "valid.txt").write_text("e0\tnext\te1\n")
    (KG_DIR / "test.txt").write_text("e3\tnext\te4\ne5\tprev\te4\n")
    yield Runs(tmp_path_factory.mktemp("composition"))
    shutil.rmtree(KG_DIR, ignore_errors=True)


def records(out: Path) -> dict:
    return json.loads((out / "run.json").read_text())


def epochs(out: Path) -> list[int]:
    return [json.loads(line)["epoch"] for line in (out / "metrics.jsonl").read_text().splitlines()
            if line.strip() and "epoch" in json.loads(line)]


def table_of(path: Path) -> Any:
    return pq.read_table(path).to_pandas()


# --- the checks of ✓ cells ------------------------------------------------------------------

def check_model(key: str, runs: Runs) -> None:
    from graphflow.manager import create_host

    host = create_host(plugins={"third_party": ThirdParty()})
    result = runs.run(f"{key}-model", pipeline(key, model=SETUPS[key].tiny_model, exports=(),
                                                track=False, epochs=1), host=host)
    assert not isinstance(result, Exception), result
    model = result.ctx.artifacts.model
    assert any(isinstance(m, TinyConvModule) for m in model.modules())
    assert result.record["status"] == "ok" and result.record["metrics"]


def check_sampled(key: str, runs: Runs) -> None:
    if key == "node":
        result = runs.base("node_sampled")
    else:
        result = runs.run(f"{key}-sampled", pipeline(key, sample=SETUPS[key].sample_to_add,
                                                     exports=(), track=False, epochs=1))
        assert not isinstance(result, Exception), result
    assert result.ctx.sampler is not None and result.record["status"] == "ok"
    assert result.record["metrics"]


NPROC_MIXED = f"""[pipeline]
name = "nproc"
seed = 0
device = "cpu"
{SBM}[[transform]]
type = "link_split"
val = 0.1
test = 0.1
[model]
type = "gcn"
hidden = 8
[[train]]
type = "node_classification"
epochs = 1
[[train]]
type = "node_classification"
epochs = 1
[train.sample]
type = "neighbor"
fanouts = [4, 4]
batch_size = 32
[train.model]
type = "sage"
hidden = 8
[[train]]
type = "link_prediction"
epochs = 1
[[export]]
type = "parquet"
what = "predictions"
"""
NPROC_STAGE = {"node": "train.0", "node_sampled": "train.1", "link": "train.2"}
"""The node and link rows share one data-parallel launch (one stage each): a launch costs
three interpreters' start-up."""


def check_nproc(key: str, runs: Runs) -> None:
    name = "nproc" if key in NPROC_STAGE else f"{key}-nproc"
    if ("nproc", name) not in runs.cache:
        text = NPROC_MIXED if key in NPROC_STAGE else pipeline(key, exports=("predictions",),
                                                                track=False, epochs=1)
        path = runs.write(name, text)
        out = runs.root / name
        proc = subprocess.run([sys.executable, "-m", "graphflow", "run", str(path), "--nproc",
                               "2", "--out-dir", str(out), "--quiet"], capture_output=True,
                              text=True, timeout=300,
                              env={**os.environ, "GRAPHFLOW_PROGRESS": "0"})
        runs.cache[("nproc", name)] = proc
    proc = runs.cache[("nproc", name)]
    assert proc.returncode == 0, proc.stderr
    record = records(runs.root / name)
    assert record["status"] == "ok" and record["world_size"] == 2
    sections = [stage["section"] for stage in record["stages"]]
    assert NPROC_STAGE.get(key, "train") in sections, sections
    assert table_of(runs.root / name / "predictions.parquet").shape[0] > 0


def precision_option(key: str) -> str:
    task = capabilities.task_class(ROW[key].task)
    fields = task.Options.__dataclass_fields__
    if "precision" in fields:
        return 'precision = "bfloat16"\n' if key == "skipgram" else 'precision = "bf16-mixed"\n'
    return "amp = true\n"


def check_amp(key: str, runs: Runs) -> None:
    result = runs.run(f"{key}-amp", pipeline(key, train=precision_option(key), exports=(),
                                              track=False, epochs=1))
    assert not isinstance(result, Exception), result
    assert result.record["status"] == "ok"
    a = result.ctx.artifacts
    out = a.embeddings if key in ("link", "skipgram") else a.logits
    if key == "link_typed":  # the scored pairs of every relation
        out = a.links.score
    if key == "kg":  # the entity and relation tables
        out = torch.cat([p.detach().reshape(-1) for p in a.model.parameters()])
    assert out is not None and torch.isfinite(out).all()


def check_nan_guard(key: str, runs: Runs) -> None:
    from graphflow.errors import NumericalError

    result = runs.run(f"{key}-nan", pipeline(key, train="lr = 1e38\n", track=False))
    assert isinstance(result, NumericalError), result
    assert "lower lr" in str(result) or "diverged" in str(result), str(result)
    out = runs.root / f"{key}-nan"
    assert records(out)["status"] == "failed"
    assert not list(out.glob("*.parquet")) and not list(out.glob("*.onnx"))


def check_bundle(key: str, runs: Runs) -> None:
    from graphflow.bundle import load_bundle

    result = runs.base(key)
    assert (result.out_dir / "model" / "bundle.json").exists()
    bundle = load_bundle(result.out_dir, warn=lambda line: None)
    assert bundle is not None


def predict_args(key: str, runs: Runs, result: Any) -> list[str]:
    if key != "link":
        return []
    links = table_of(result.out_dir / "links.parquet").head(6)
    pairs = runs.root / "pairs.csv"
    pairs.write_text("src,dst\n" + "".join(f"{s},{d}\n" for s, d in zip(links.src, links.dst)))
    return ["--pairs", str(pairs)]


def check_kg_predict(runs: Runs, cli: Any) -> None:
    """A knowledge-graph bundle answers queries from a file: the top tails / heads, scored by
    the run's own model."""
    result = runs.base("kg")
    queries = runs.root / "kg-queries.txt"
    queries.write_text("e3\tnext\t?\n?\tprev\te4\n")
    out = runs.root / "kg-predict"
    code, _, err = cli("predict", result.out_dir, "--queries", queries, "--top-k", "2",
                       "--out", out, "--quiet")
    assert code == 0, err
    table = table_of(out / "answers.parquet")
    model, kg = result.ctx.artifacts.model.eval(), result.ctx.data.meta["kg"]
    e = {name: i for i, name in enumerate(kg.entities)}
    with torch.no_grad():
        tails = model.score_t(torch.tensor([e["e3"]]), torch.tensor([0]))[0]
        heads = model.score_h(torch.tensor([1]), torch.tensor([e["e4"]]))[0]
    expected = torch.topk(tails, 2).values.tolist() + torch.topk(heads, 2).values.tolist()
    assert table["score"].tolist() == pytest.approx(expected, abs=1e-5)


def check_predict(key: str, runs: Runs, cli: Any) -> None:
    if key == "kg":
        return check_kg_predict(runs, cli)
    result = runs.base(key)
    out = runs.root / f"{key}-predict"
    code, _, err = cli("predict", result.out_dir, "--data", runs.root / f"{key}.toml", "--out",
                       out, "--quiet", *predict_args(key, runs, result))
    assert code == 0, err
    if key == "link":
        ours = table_of(out / "links.parquet")
        theirs = table_of(result.out_dir / "links.parquet").head(len(ours))
        assert list(ours.src) == list(theirs.src)
        assert list(ours.score) == pytest.approx(list(theirs.score), abs=1e-6)
        return
    ours, theirs = table_of(out / "predictions.parquet"), table_of(
        result.out_dir / "predictions.parquet")
    assert list(ours.columns) == list(theirs.columns)
    assert ours.equals(theirs) or all(
        ours[c].tolist() == pytest.approx(theirs[c].tolist(), abs=1e-5)
        if ours[c].dtype.kind == "f" else ours[c].tolist() == theirs[c].tolist()
        for c in ours.columns)


def check_serve(key: str, runs: Runs) -> None:
    from starlette.testclient import TestClient

    from graphflow.serve.app import create_app
    from graphflow.serve.service import start_service

    result = runs.base(key)
    if key == "kg":  # a knowledge-graph bundle serves from its names and known triples
        client = TestClient(create_app(start_service(result.out_dir, quiet=True)))
        assert client.get("/health").json()["status"] == "ok"
        answer = client.post("/complete", json={"queries": [["e3", "next", "?"]], "k": 2})
        assert answer.status_code == 200, answer.text
        model, kg = result.ctx.artifacts.model.eval(), result.ctx.data.meta["kg"]
        with torch.no_grad():
            tails = model.score_t(torch.tensor([list(kg.entities).index("e3")]),
                                  torch.tensor([0]))[0]
        assert [r["score"] for r in answer.json()["answers"]] == pytest.approx(
            torch.topk(tails, 2).values.tolist(), abs=1e-5)
        return
    service = start_service(result.out_dir, data=runs.root / f"{key}.toml", quiet=True)
    client = TestClient(create_app(service))
    assert client.get("/health").json()["status"] == "ok"
    if key == "link":
        links = table_of(result.out_dir / "links.parquet").head(5)
        answer = client.post("/score/pairs", json={"pairs": [[s, d] for s, d in zip(
            links.src.tolist(), links.dst.tolist())]})
        assert answer.status_code == 200, answer.text
        assert [r["score"] for r in answer.json()["scores"]] == pytest.approx(
            list(links.score), abs=1e-6)
        return
    theirs = table_of(result.out_dir / "predictions.parquet").head(5)
    path = "/predict/graphs" if ROW[key].task.startswith("graph") else "/predict/nodes"
    answer = client.post(path, json={"ids": theirs["id"].tolist()})
    assert answer.status_code == 200, answer.text
    rows = answer.json()["predictions"]
    assert [r["id"] for r in rows] == theirs["id"].tolist()
    expected = theirs["prediction"].tolist()
    if key == "graph_reg":
        assert [r["prediction"] for r in rows] == pytest.approx(expected, abs=1e-5)
    else:
        assert [r["prediction"] for r in rows] == expected
        if "class" in theirs.columns:  # class names where the labels have them
            assert [r["class"] for r in rows] == theirs["class"].tolist()


def portable_inputs(result: Any, sidecar: dict) -> list[torch.Tensor]:
    """The run's own graph as the exported model's inputs, by the sidecar's input names."""
    g = result.ctx.graph().graph
    src, dst = g.edges()
    x = g.ndata["feat"].float()
    values: dict[str, torch.Tensor] = {"x": x, "src": src.long(), "dst": dst.long(),
                                       "weight": torch.ones(src.shape[0])}
    if "edge_feat" in g.edata:
        values["edge_feat"] = g.edata["edge_feat"].float()
    graphs = getattr(result.ctx.graph(), "graphs", None)
    if graphs is not None:
        ptr = graphs.graph_ptr.long()
        values["graph"] = torch.repeat_interleave(torch.arange(ptr.shape[0] - 1), ptr.diff())
        values["num_graphs"] = torch.tensor(ptr.shape[0] - 1)
    links = getattr(result.ctx.artifacts, "links", None)
    if links is not None:
        values["pair_src"], values["pair_dst"] = links.pairs[0].long(), links.pairs[1].long()
    names = [i["name"] for i in sidecar["inputs"]]
    missing = [n for n in names if n not in values]
    assert not missing, f"no input {missing} for {names}"
    return [values[n] for n in names]


def expected_output(key: str, result: Any) -> torch.Tensor:
    a = result.ctx.artifacts
    return a.embeddings if key == "link" else a.logits


def typed_inputs(result: Any, sidecar: dict) -> tuple[list, list, dict]:
    """A typed model's inputs from the run's graph: per node type features (node positions
    when featureless), per relation its edges; and all of them by ONNX input name."""
    g = result.ctx.graph().graph
    xs = [torch.arange(g.num_nodes(t["type"])) if t["featureless"]
          else g.nodes[t["type"]].data["feat"].float() for t in sidecar["node_types"]]
    named = {t["input"]: x for t, x in zip(sidecar["node_types"], xs)}
    rels = []
    for k, rel in enumerate(sidecar["relations"]):
        src, dst = g.edges(etype=tuple(rel["relation"]))
        rels.append((src.long(), dst.long(), torch.ones(src.shape[0])))
        named.update({f"src_{k}": rels[-1][0], f"dst_{k}": rels[-1][1],
                      f"weight_{k}": rels[-1][2]})
    return xs, rels, named


def check_portable(key: str, runs: Runs, fmt: str) -> None:
    result = runs.base(key)
    file = result.out_dir / ("model.onnx" if fmt == "onnx" else "model.torchscript.pt")
    sidecar = json.loads(file.with_name(file.name + ".json").read_text())
    if sidecar.get("inputs_form") == "typed":  # one input per node type and per relation
        xs, rels, named = typed_inputs(result, sidecar)
        if fmt == "onnx":
            import onnxruntime as ort

            session = ort.InferenceSession(str(file), providers=["CPUExecutionProvider"])
            got = torch.from_numpy(session.run(None, {i.name: named[i.name].numpy() for i
                                                      in session.get_inputs()})[0])
        else:
            with torch.no_grad():
                got = torch.jit.load(str(file))(xs, rels)
        expected = expected_output(key, result).float()
        assert got.shape == expected.shape
        assert (got - expected).abs().max().item() < 1e-4
        return
    inputs = portable_inputs(result, sidecar)
    if fmt == "onnx":
        import onnxruntime as ort

        session = ort.InferenceSession(str(file), providers=["CPUExecutionProvider"])
        feeds = {i.name: t.numpy() for i, t in zip(session.get_inputs(), inputs)}
        got = torch.from_numpy(session.run(None, feeds)[0])
    else:
        module = torch.jit.load(str(file))
        with torch.no_grad():
            got = module(*inputs)
        got = got[0] if isinstance(got, (tuple, list)) else got
    expected = expected_output(key, result).float()
    assert got.shape == expected.shape
    assert (got - expected).abs().max().item() < 1e-4


def check_embeddings(key: str, runs: Runs) -> None:
    result = runs.base(key)
    table = table_of(result.out_dir / "embeddings.parquet")
    emb = result.ctx.artifacts.embeddings
    assert len(table) == emb.shape[0]
    column = [c for c in table.columns if c not in ("id", "type")][-1]
    got = torch.tensor([list(v) for v in table[column]], dtype=torch.float32)  # (N, D)
    assert torch.allclose(got, emb.float(), atol=1e-6)
    if ROW[key].typed:  # every node type's rows, with their type
        assert set(table["type"]) == set(result.ctx.graph().graph.ntypes)


def check_predictions(key: str, runs: Runs) -> None:
    result = runs.base(key)
    table = table_of(result.out_dir / "predictions.parquet")
    logits = result.ctx.artifacts.logits
    assert len(table) == logits.shape[0]
    if key == "graph_reg":
        column = [c for c in table.columns if c != "id"][0]
        got = torch.tensor(table[column].tolist(), dtype=torch.float32).reshape(logits.shape)
        assert torch.allclose(got, logits.float(), atol=1e-5)
    else:
        assert table["prediction"].tolist() == result.ctx.artifacts.predictions.tolist() or \
            len(set(table["prediction"])) <= logits.shape[1]


def check_tracker(key: str, runs: Runs) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    result = runs.base(key)
    folder = result.out_dir / "tensorboard"
    assert list(folder.rglob("events.out.tfevents.*")), folder
    acc = EventAccumulator(str(next(folder.rglob("events.out.tfevents.*")).parent))
    acc.Reload()
    assert acc.Tags()["scalars"], acc.Tags()


def check_sweep(key: str, runs: Runs, cli: Any) -> None:
    s = SETUPS[key]
    text = pipeline(key, exports=(), track=False, epochs=1) + (
        f'[sweep]\nmetric = "{s.metric}"\ndirection = "{s.direction}"\ntrials = 1\n'
        f'sampler = "grid"\nseeds = [0]\n[sweep.params]\n"train.lr" = [0.02]\n')
    path = runs.write(f"{key}-sweep", text)
    code, _, err = cli("sweep", path, "--out-dir", runs.root / f"{key}-sweep")
    assert code == 0, err
    trials = pq.read_table(runs.root / f"{key}-sweep" / "trials.parquet").to_pylist()
    assert len(trials) == 1 and trials[0]["params.train.lr"] == 0.02, trials
    value = trials[0][s.metric]
    assert trials[0]["state"] == "complete" and value == value, trials  # a number, not NaN


def stopped(key: str, runs: Runs) -> Any:
    """The row's run stopped by SIGTERM after epoch 1, then resumed: (stop, resumed)."""
    from graphflow.manager import create_host
    from graphflow.runtime.signals import Terminated, handle_signals

    name = f"{key}-signal"
    if ("stopped", key) not in runs.cache:
        text = pipeline(key, exports=(), track=False)
        host = create_host(plugins={"stop": StopAfterFirstEpoch()})
        with handle_signals():
            stop = runs.run(name, text, host=host)
        runs.cache[("stopped", key)] = stop
        assert isinstance(stop, Terminated), stop
        runs.cache[("after", key)] = (records(runs.root / name), epochs(runs.root / name))
    return runs.cache[("stopped", key)], runs.cache[("after", key)]


def check_sigterm(key: str, runs: Runs) -> None:
    stop, (record, done) = stopped(key, runs)
    assert stop.exit_code == 143
    assert record["status"] != "ok" and record.get("signal") == "SIGTERM", record
    assert done and max(done) == 1  # stopped after the first of 2 epochs


def check_resume(key: str, runs: Runs) -> None:
    stopped(key, runs)
    result = runs.run(f"{key}-signal", pipeline(key, exports=(), track=False), resume=True)
    assert not isinstance(result, Exception), result
    assert result.record["status"] == "ok"
    done = epochs(result.out_dir)
    assert max(done) == 2 and len(done) == len(set(done)), done  # no epoch twice


CHECKS = {
    "model": check_model, "sampled": check_sampled, "nproc": check_nproc, "amp": check_amp,
    "nan_guard": check_nan_guard, "bundle": check_bundle, "serve": check_serve,
    "embeddings": check_embeddings, "predictions": check_predictions,
    "tracker": check_tracker, "sigterm": check_sigterm, "resume": check_resume,
}


def check_works(key: str, feature: str, runs: Runs, cli: Any) -> None:
    if feature in ("onnx", "torchscript"):
        check_portable(key, runs, feature)
    elif feature in ("predict", "sweep"):
        {"predict": check_predict, "sweep": check_sweep}[feature](key, runs, cli)
    else:
        CHECKS[feature](key, runs)


# --- refused, not applicable ----------------------------------------------------------------

def asking(key: str, feature: str) -> tuple[str, list[str]]:
    """A pipeline and command-line flags that ask row ``key`` for ``feature``."""
    if feature in EXPORTS:
        return pipeline(key, exports=(feature,), track=False), []
    if feature == "nproc":
        return pipeline(key, exports=(), track=False), ["--nproc", "2"]
    if feature == "sampled":
        return pipeline(key, sample=SETUPS[key].sample_to_add, exports=(), track=False), []
    if feature == "amp":
        return pipeline(key, train=precision_option(key), exports=(), track=False), []
    if feature == "tracker":
        return pipeline(key, exports=(), track=True), []
    raise AssertionError(f"no way to ask {key} for {feature} in a pipeline")


def check_no_bundle(c: capabilities.Cell, runs: Runs, cli: Any) -> None:
    """No pipeline asks for a bundle: a task that refuses one writes none, and predict and
    serve stop in one line (as serve does on a bundle it cannot serve)."""
    from graphflow.errors import GraphflowError
    from graphflow.serve.service import start_service

    result = runs.base(c.row.key)
    bundled = cell_of(c.row.key, "bundle").status == "yes"  # kg: a bundle predict answers
    assert (result.out_dir / "model" / "bundle.json").exists() == bundled
    if c.feature == "predict":
        code, _, err = cli("predict", result.out_dir, "--data", runs.root / f"{c.row.key}.toml",
                           "--out", runs.root / f"{c.row.key}-predict", "--quiet")
        assert code == 1 and len(err.strip().splitlines()) == 1, err
    elif c.feature == "serve":
        with pytest.raises(GraphflowError):
            start_service(result.out_dir, quiet=True)


def check_refused(c: capabilities.Cell, runs: Runs, cli: Any) -> None:
    if c.feature in ("bundle", "predict", "serve"):
        return check_no_bundle(c, runs, cli)
    text, flags = asking(c.row.key, c.feature)
    path = runs.write(f"{c.row.key}-refused-{c.feature}", text)
    line = f"graphflow: error: {c.refusal.line('train', c.row.task)}"
    code, _, err = cli("validate", path, *flags)
    assert code == 1
    assert err.splitlines()[0].startswith(line), err
    assert len(err.strip().splitlines()) == 1, err
    out = runs.root / f"{c.row.key}-refused-{c.feature}-run"
    code, _, err = cli("run", path, "--out-dir", out, *flags)
    assert code == 1 and err.splitlines()[0].startswith(line), err
    assert not out.exists()  # refused before anything ran


def check_not_applicable(c: capabilities.Cell, runs: Runs) -> None:
    result = runs.base(c.row.key)
    if c.feature in ("bundle", "predict", "serve"):
        assert not (result.out_dir / "model").exists()
    elif c.feature == "sampled":
        assert result.ctx.sampler is not None  # the row itself trains on a sampler
    elif c.feature == "model" and c.row.key == "kg":
        from graphflow.kge.models import KgeModel

        assert isinstance(result.ctx.artifacts.model, KgeModel)
    elif c.feature == "model":
        assert result.ctx.artifacts.model is None  # no [model] was trained
    else:
        raise AssertionError(f"no check for a {c.feature} cell that does not apply")


CELLS = [(row.key, feature) for row in ROWS for feature in FEATURES]


@pytest.mark.parametrize("key, feature", CELLS, ids=[f"{k}-{f}" for k, f in CELLS])
def test_cell(key, feature, runs, cli, request):
    c = cell_of(key, feature)
    if c.status == "no":
        check_refused(c, runs, cli)
    elif c.status == "n/a":
        check_not_applicable(c, runs)
    else:
        if c.status == "pending":
            request.applymarker(pytest.mark.xfail(reason=c.reason, strict=False))
        check_works(key, feature, runs, cli)


def test_the_docs_table_is_generated_from_the_cells():
    page = (ROOT / "docs" / "capabilities.md").read_text()
    assert page == capabilities.markdown(), (
        "docs/capabilities.md is stale: python -m graphflow.capabilities --markdown > "
        "docs/capabilities.md")


def test_every_refusal_has_its_reason_and_alternative():
    for row_cells in capabilities.table():
        for c in row_cells:
            if c.status != "yes":
                assert c.reason, (c.row.key, c.feature)
            if c.status == "no":
                assert c.refusal.reason and c.refusal.alternative
