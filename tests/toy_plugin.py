"""A toy third-party plugin used by the host tests: one loader, one task, one exporter.

Tests register it in-process (``toy_host``) or as a fake entry point (``toy_entry_point``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from graphflow.components import Exporter, Loader, Task, What
from graphflow.errors import DataError
from graphflow.io.atomic import atomic_path
from graphflow.options import option
from graphflow.plugin import hookimpl


class TinyLoader(Loader):
    """The 6-node test graph of graphflow.testing, optionally failing on purpose."""

    name = "tiny"
    summary = "six hand-built nodes"

    @dataclass
    class Options:
        fail: str = option("", 'raise this kind of error: "", "data" or "bug"')
        path: Path | None = option(None, "a file that must exist (for check())")

    def check(self) -> None:
        if self.options.path is not None and not self.options.path.exists():
            raise DataError(f"file not found: {self.options.path}")

    def load(self, ctx):
        self.check()
        if self.options.fail == "data":
            raise DataError("edges.tsv:3: expected 2 columns, got 1")
        if self.options.fail == "bug":
            raise ZeroDivisionError("division by zero")
        from graphflow.testing import make_tiny_graph

        return make_tiny_graph()


class CountTask(Task):
    """Logs one record per epoch and an embedding per node (node degree features)."""

    name = "count"
    summary = "a training loop that only counts"

    @dataclass
    class Options:
        epochs: int = option(3, "number of epochs")
        lr: float = option(0.1, "unused learning rate")

    def run(self, ctx):
        for epoch in ctx.progress(range(1, self.options.epochs + 1), desc="epochs"):
            ctx.log_epoch(epoch, loss=1.0 / epoch)
        g = ctx.graph().graph
        ctx.artifacts.embeddings = torch.stack([g.in_degrees().float(), g.out_degrees().float()], 1)
        ctx.log_metrics(nodes=g.num_nodes(), draw=torch.rand(1, generator=ctx.rng).item())


class TextExporter(Exporter):
    """Writes an artifact as text, one row per node."""

    name = "text"
    summary = "artifact as text"

    @dataclass
    class Options:
        what: What = option("embeddings", "artifact")
        path: Path = option(Path("out.txt"), "output file")

    def export(self, ctx):
        value = ctx.artifacts.require(self.options.what, section=ctx.stage.section)
        with atomic_path(self.options.path) as tmp:
            tmp.write_text("\n".join(" ".join(f"{v:g}" for v in row) for row in value.tolist()))
        return [self.options.path]


class ToyPlugin:
    """An in-process plugin with one loader, one task and one exporter."""

    @hookimpl
    def graphflow_register_loaders(self, register):
        register(TinyLoader)

    @hookimpl
    def graphflow_register_tasks(self, register):
        register(CountTask)

    @hookimpl
    def graphflow_register_exporters(self, register):
        register(TextExporter)


plugin = ToyPlugin()

TOY_PIPELINE = """
[pipeline]
name = "toy"
seed = 7

[load]
type = "tiny"

[train]
type = "count"
epochs = 3

[[export]]
type = "text"
what = "embeddings"
path = "emb.txt"
"""
