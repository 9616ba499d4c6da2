"""Pytest fixtures for graphflow and for plugin authors (``pytest_plugins = ["graphflow.testing"]``).

* ``host``: a fresh plugin host (entry points loaded, nothing global).
* ``tiny_graph``: a hand-built 6-node graph with features, labels, masks and a node with no
  in-edges, as a :class:`~graphflow.graph.GraphData`.
* ``typed_graph``: a small typed graph (papers, authors, featureless venues) with labels on
  one type, as a typed :class:`~graphflow.graph.GraphData` (:func:`make_typed_graph`).
* ``typed_host``: a fresh host with loader ``typed_test`` (:class:`TypedTestLoader`: that graph,
  ``papers`` and ``drop_labels`` options) registered as plugin ``typed_test``.
* ``shared_data``: ``shared_data("mutag")`` -> the folder of a shared data set (``planetoid``,
  ``mutag``, ``aifb``, ...); skips the test, naming the folder and the variable to set, when the
  folder or its files are absent. The same check is the plain function :func:`shared_data`.
* ``planetoid_root``: ``shared_data("planetoid")``, the folder of raw Planetoid files.
* ``mutag_root``: ``shared_data("mutag")``, the folder of MUTAG.mat / MUTAG.npz.
* ``run_toml``: write a pipeline into ``tmp_path`` and run it, returning the ``RunResult``.
* ``cli``: run the ``graphflow`` command in-process, returning ``(exit_code, stdout, stderr)``.

Pipelines the task tests share (TOML text, small enough to train in a second or two):
:func:`node_pipeline` (node classification on a seeded 300-node SBM, :data:`NODE_SAMPLER`),
:func:`link_pipeline` (link prediction on a 200-node SBM, :data:`LINK_SPLIT`,
:data:`LINK_SAMPLER`) and :func:`graph_pipeline` (graph classification of the rings and paths
collection in ``examples/data``, :data:`RINGS_PATHS`); and the runs whose model bundle the
bundle, ``predict`` and ``serve`` tests read: :func:`bundle_node_pipeline` (with a fitted
transform) and :func:`papers_link_pipeline` (original string ids).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from graphflow.components import Loader
from graphflow.options import option
from graphflow.plugin import hookimpl

DATA_ENV = "GRAPHFLOW_DATA_DIR"
PLANETOID_ENV = "GRAPHFLOW_PLANETOID_DIR"
REPO_ROOT = Path(__file__).resolve().parent.parent

#: Files whose presence says a known data set is there (any other name: a non-empty folder).
DATA_FILES: dict[str, tuple[str, ...]] = {
    "planetoid": ("ind.cora.x",),
    "mutag": ("MUTAG.mat",),
    "aifb": ("aifb_stripped.nt.gz", "trainingSet.tsv", "testSet.tsv"),
}
#: Variables that point at one data set's folder directly (they win over ``$GRAPHFLOW_DATA_DIR``).
DATA_SET_ENV: dict[str, str] = {"planetoid": PLANETOID_ENV}


def data_dir() -> Path:
    """The folder of the shared data sets: ``$GRAPHFLOW_DATA_DIR`` or ``../shared/data``
    beside the repository root."""
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


def shared_data_dir(name: str) -> Path:
    """Where data set ``name`` would be: its own variable (``$GRAPHFLOW_PLANETOID_DIR`` for
    ``planetoid``) when set, else ``data_dir() / name``. Does not check that it exists."""
    var = DATA_SET_ENV.get(name)
    env = os.environ.get(var) if var else None
    return Path(env) if env else data_dir() / name


def shared_data(name: str, *files: str) -> Path:
    """The folder of shared data set ``name``; skips the calling test when it is absent.

    :param name: the data set's folder name under the data folder (``planetoid``, ``mutag``,
        ``aifb``...).
    :param files: files that must be in it; default: those of :data:`DATA_FILES` for a known
        name, else any file at all.
    """
    root = shared_data_dir(name)
    needed = files or DATA_FILES.get(name, ())
    missing = [f for f in needed if not (root / f).exists()]
    if not root.is_dir():
        what = f"{root} not found"
    elif missing:
        what = f"{', '.join(missing)} not found in {root}"
    elif not needed and not any(root.iterdir()):
        what = f"{root} is empty"
    else:
        return root
    var = DATA_SET_ENV.get(name)
    hint = f"{var} to its folder, or " if var else ""
    pytest.skip(f'shared data set "{name}": {what} (set {hint}{DATA_ENV} to the folder that '
                f'holds {name}/)')


def planetoid_dir() -> Path:
    """Where the raw Planetoid files are: ``$GRAPHFLOW_PLANETOID_DIR``, else ``planetoid/`` in
    the data folder (``$GRAPHFLOW_DATA_DIR`` or ``../shared/data``)."""
    return shared_data_dir("planetoid")


@pytest.fixture(name="shared_data")
def shared_data_fixture() -> Callable[..., Path]:
    """``shared_data("mutag")`` -> the data set's folder, or the test is skipped saying why."""
    return shared_data


@pytest.fixture
def planetoid_root() -> Path:
    return shared_data("planetoid")


@pytest.fixture
def mutag_root() -> Path:
    return shared_data("mutag")


@pytest.fixture
def host():
    from graphflow.manager import create_host

    return create_host()


def make_tiny_graph():
    """6 nodes, 9 directed edges; node 5 has no in-edges; 2 classes; 4 features."""
    from graphflow.compat.dgl import dgl
    from graphflow.graph import GraphData, NodeIds

    src = torch.tensor([0, 1, 1, 2, 2, 3, 4, 5, 5])
    dst = torch.tensor([1, 0, 2, 1, 3, 4, 3, 0, 4])
    g = dgl.graph((src, dst), num_nodes=6)
    gen = torch.Generator().manual_seed(0)
    g.ndata["feat"] = torch.randn(6, 4, generator=gen)
    g.ndata["label"] = torch.tensor([0, 0, 1, 1, 0, 1])
    g.ndata["train_mask"] = torch.tensor([True, True, True, False, False, False])
    g.ndata["val_mask"] = torch.tensor([False, False, False, True, False, False])
    g.ndata["test_mask"] = torch.tensor([False, False, False, False, True, True])
    return GraphData(graph=g, ids=NodeIds.identity(6), name="tiny")


@pytest.fixture
def tiny_graph():
    return make_tiny_graph()


def make_typed_graph(num_papers: int = 60, seed: int = 0):
    """A small typed graph: ``paper`` (5 features, 3 classes, masks), ``author`` (3 features)
    and featureless ``venue`` nodes; relations ``writes``/``rev-writes``, ``cites`` and
    ``in``/``rev-in``. A paper's class is its venue's class, so structure predicts labels."""
    from graphflow.compat.dgl import dgl
    from graphflow.graph import GraphData, NodeIds

    gen = torch.Generator().manual_seed(seed)
    n_paper, n_author, n_venue = num_papers, num_papers // 2, 6
    venue = torch.randint(0, n_venue, (n_paper,), generator=gen)  # (P,)
    label = venue % 3
    writer = torch.randint(0, n_author, (2 * n_paper,), generator=gen)
    written = torch.arange(2 * n_paper) % n_paper
    cite_src = torch.randint(0, n_paper, (3 * n_paper,), generator=gen)
    cite_dst = torch.randint(0, n_paper, (3 * n_paper,), generator=gen)
    papers = torch.arange(n_paper)
    g = dgl.heterograph({
        ("author", "writes", "paper"): (writer, written),
        ("paper", "rev-writes", "author"): (written, writer),
        ("paper", "cites", "paper"): (cite_src, cite_dst),
        ("paper", "in", "venue"): (papers, venue),
        ("venue", "rev-in", "paper"): (venue, papers),
    }, num_nodes_dict={"paper": n_paper, "author": n_author, "venue": n_venue})
    g.nodes["paper"].data["feat"] = torch.randn(n_paper, 5, generator=gen)
    g.nodes["author"].data["feat"] = torch.randn(n_author, 3, generator=gen)
    g.nodes["paper"].data["label"] = label
    split = torch.arange(n_paper) % 5
    g.nodes["paper"].data["train_mask"] = split < 3
    g.nodes["paper"].data["val_mask"] = split == 3
    g.nodes["paper"].data["test_mask"] = split == 4
    ids = {"paper": NodeIds(n_paper, pa_strings("p", n_paper)),
           "author": NodeIds(n_author, pa_strings("a", n_author)),
           "venue": NodeIds(n_venue, pa_strings("v", n_venue))}
    return GraphData(graph=g, ids=NodeIds.identity(g.num_nodes()), name="typed",
                     meta={"num_classes": 3}, typed_ids=ids)


def pa_strings(prefix: str, n: int):
    import pyarrow as pa

    return pa.array([f"{prefix}{i}" for i in range(n)])


@pytest.fixture
def typed_graph():
    return make_typed_graph()


class TypedTestLoader(Loader):
    """The typed test graph of :func:`make_typed_graph` (optionally without the paper labels)."""

    name = "typed_test"
    summary = "papers, authors, venues"

    @dataclasses.dataclass
    class Options:
        papers: int = option(60, "papers")
        drop_labels: bool = option(False, "remove the paper labels")

    def load(self, ctx):
        data = make_typed_graph(self.options.papers)
        if self.options.drop_labels:
            del data.graph.nodes["paper"].data["label"]
        return data


class TypedTestPlugin:
    """Registers :class:`TypedTestLoader` (``type = "typed_test"``)."""

    @hookimpl
    def graphflow_register_loaders(self, register):
        register(TypedTestLoader)


@pytest.fixture
def typed_host():
    """A fresh host with the ``typed_test`` loader registered in-process."""
    from graphflow.manager import create_host

    return create_host(plugins={"typed_test": TypedTestPlugin()})


NODE_PIPELINE = """
[pipeline]
name = "nc"
seed = {seed}
{header}
[load]
type = "synthetic"
nodes = 300
classes = 3
features = 8
p_in = 0.06
p_out = 0.006
signal = 0.7
{sample}
[model]
type = "{model}"
hidden = 16
[train]
type = "node_classification"
epochs = {epochs}
lr = {lr}
{train}
"""
#: Neighbour sampling for :func:`node_pipeline`: two layers of 5, batches of 64 seeds.
NODE_SAMPLER = '[sample]\ntype = "neighbor"\nfanouts = [5, 5]\nbatch_size = 64'


def node_pipeline(seed: int = 0, model: str = "gcn", epochs: int = 30, sample: str = "",
                  train: str = "", lr: float = 0.02, header: str = "") -> str:
    """Node classification on a seeded 300-node, 3-class SBM with 8 features.

    :param sample: a ``[sample]`` section (``NODE_SAMPLER``) or "" for full batch.
    :param train: more lines of the ``[train]`` section.
    :param header: more lines of the ``[pipeline]`` section (``device = "cpu"``).
    """
    return NODE_PIPELINE.format(seed=seed, model=model, epochs=epochs, sample=sample,
                                train=train, lr=lr, header=header)


LINK_PIPELINE = """
[pipeline]
name = "lp"
seed = {seed}
{header}
[load]
type = "synthetic"
nodes = 200
classes = 4
features = 8
p_in = 0.08
p_out = 0.004
signal = 0.8
{split}
{sample}
[model]
type = "{model}"
hidden = 16
dropout = 0.0
[train]
type = "link_prediction"
embedding_dim = 16
epochs = {epochs}
lr = 0.02
eval_negatives = 20
hits_at = [1, 10]
{train}
{export}
"""
#: The held-out edges :func:`link_pipeline` trains and evaluates on (10 % validation, 10 % test).
LINK_SPLIT = '[[transform]]\ntype = "link_split"\nval = 0.1\ntest = 0.1'
#: Neighbour sampling for :func:`link_pipeline`: two layers of 5, batches of 256 edges.
LINK_SAMPLER = '[sample]\ntype = "neighbor"\nfanouts = [5, 5]\nbatch_size = 256'


def link_pipeline(seed: int = 0, model: str = "gcn", epochs: int = 20, sample: str = "",
                  train: str = "", split: str = LINK_SPLIT, export: str = "",
                  header: str = "") -> str:
    """Link prediction on a seeded 200-node, 4-class SBM with 8 features.

    :param split: the ``link_split`` transform (``LINK_SPLIT``), or another.
    :param sample: a ``[sample]`` section (``LINK_SAMPLER``) or "" for full batch.
    :param train: more lines of the ``[train]`` section.
    :param export: ``[[export]]`` sections.
    :param header: more lines of the ``[pipeline]`` section.
    """
    return LINK_PIPELINE.format(seed=seed, model=model, epochs=epochs, sample=sample,
                                train=train, split=split, export=export, header=header)


#: A small TU-format collection of ring and path graphs (``RP``), in the repository's examples.
RINGS_PATHS = REPO_ROOT / "examples" / "data" / "rings_paths"

GRAPH_PIPELINE = """
[pipeline]
seed = 0
device = "cpu"
[load]
type = "tu"
path = "{path}"
name = "RP"
features = "degree"
[model]
type = "{model}"
hidden = 16
{model_extra}
[train]
type = "graph_classification"
epochs = {epochs}
batch_size = 4
hidden = 16
{train_extra}
[train.cores]
threads = 1
"""


def graph_pipeline(model: str = "gin", epochs: int = 30,
                   model_extra: str = "layers = 2\ndropout = 0.0", train_extra: str = "") -> str:
    """Graph classification of :data:`RINGS_PATHS` (rings against paths, degree features).

    :param model_extra: more lines of the ``[model]`` section.
    :param train_extra: more lines of the ``[train]`` section.
    """
    return GRAPH_PIPELINE.format(path=RINGS_PATHS.as_posix(), model=model, epochs=epochs,
                                 model_extra=model_extra, train_extra=train_extra)


@pytest.fixture
def run_toml(tmp_path: Path) -> Callable[..., object]:
    """``run_toml(text, overrides=[], name="pipeline.toml")`` -> ``RunResult`` (out_dir in tmp_path)."""
    from graphflow.config import load_config
    from graphflow.manager import create_host
    from graphflow.runner import run_pipeline

    def run(text: str, overrides: list[str] = (), name: str = "pipeline.toml", **kwargs):
        path = tmp_path / name
        path.write_text(text)
        host = kwargs.pop("host", None) or create_host()
        config = load_config(path, host.registry, overrides=list(overrides),
                             out_dir=kwargs.pop("out_dir", tmp_path / "out"))
        return run_pipeline(config, host, quiet=True, **kwargs)

    return run


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``graphflow ARGS...`` in-process: ``code, out, err = cli("validate", path)``."""
    from graphflow.cli.main import main

    def run(*args: str | os.PathLike[str]) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run


BUNDLE_NODE_PIPELINE = """
[pipeline]
name = "{name}"
seed = 0

[load]
type = "synthetic"
kind = "sbm"
nodes = {nodes}
classes = 3
features = {features}
p_in = 0.05
p_out = 0.005
train = 0.3
val = 0.2
test = 0.5

[[transform]]
type = "normalize_features"
method = "standard"

[model]
type = "{model}"
hidden = {hidden}

[train]
type = "node_classification"
epochs = {epochs}
{extra}"""


def bundle_node_pipeline(name: str = "tiny", model: str = "sage", nodes: int = 300,
                         features: int = 8, hidden: int = 16, epochs: int = 3,
                         extra: str = "") -> str:
    """Node classification on a seeded SBM (3 classes, 30 / 20 / 50 % split) whose features
    go through ``normalize_features`` (a fitted transform the bundle keeps).

    :param extra: sections after ``[train]`` (``[[export]]``...).
    """
    return BUNDLE_NODE_PIPELINE.format(name=name, model=model, nodes=nodes, features=features,
                                       hidden=hidden, epochs=epochs, extra=extra)


PAPERS_LINK_PIPELINE = """
[pipeline]
name = "links"
seed = 0

[load]
type = "edgelist"
path = "{path}"
delimiter = "tab"
directed = false
nodes = "{nodes}"

[[transform]]
type = "normalize_features"
method = "standard"

[[transform]]
type = "link_split"
val = 0.05
test = 0.1

[model]
type = "sage"

[train]
type = "link_prediction"
epochs = {epochs}
{train}
[[export]]
type = "parquet"
what = "links"
"""


def papers_link_pipeline(epochs: int = 3, train: str = "") -> str:
    """Link prediction on ``examples/data/papers.tsv`` (string ids ``paper-0000``..., node
    features from ``papers_nodes.parquet``), exporting the scored ``links``.

    :param train: more lines of the ``[train]`` section (``score_pairs = "pairs.csv"``).
    """
    data = REPO_ROOT / "examples" / "data"
    return PAPERS_LINK_PIPELINE.format(path=(data / "papers.tsv").as_posix(),
                                       nodes=(data / "papers_nodes.parquet").as_posix(),
                                       epochs=epochs, train=train)
