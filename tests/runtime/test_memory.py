"""Peak memory per stage in run.json, and the run's peak in the summary."""

import json
from dataclasses import dataclass

import torch

from graphflow.runtime import memory
from graphflow.components import Transform
from graphflow.options import option
from graphflow.plugin import hookimpl

MB = 2**20


class Allocate(Transform):
    """Allocates (and touches) a float32 tensor of ``mb`` megabytes, then frees it."""

    name = "allocate"
    summary = "allocate memory on purpose"

    @dataclass
    class Options:
        mb: int = option(0, "megabytes to allocate")

    def apply(self, data, ctx):
        block = torch.ones(self.options.mb * MB // 4)  # ones(): every page is written
        assert block.numel() == 0 or float(block[-1]) == 1.0
        del block
        return data


class Plugin:
    @hookimpl
    def graphflow_register_transforms(self, register):
        register(Allocate)


PIPELINE = """
[load]
type = "synthetic"
nodes = 50
features = 4
[[transform]]
type = "allocate"
mb = 400
[[transform]]
type = "allocate"
mb = 0
"""


def test_a_stage_sees_its_own_peak(run_toml):
    from graphflow.manager import create_host

    result = run_toml(PIPELINE, host=create_host(plugins={"mem": Plugin()}))
    stages = {s["section"]: s for s in result.record["stages"]}
    big, small = stages["transform.0"], stages["transform.1"]
    assert big["rss_scope"] == small["rss_scope"] == "stage"  # Linux: reset per stage
    assert big["peak_rss_mb"] >= 400
    # The next stage starts from the freed memory: its peak lies well below.
    assert big["peak_rss_mb"] - small["peak_rss_mb"] >= 380
    assert all("peak_cuda_mb" not in s for s in stages.values())  # a CPU run
    assert result.record["memory"] == {"peak_rss_mb": big["peak_rss_mb"],
                                       "peak_rss_stage": "transform.0"}
    on_disk = json.loads((result.out_dir / "run.json").read_text())
    assert on_disk["stages"][1]["peak_rss_mb"] == big["peak_rss_mb"]


def test_without_clear_refs_the_process_peak_is_recorded(monkeypatch, tmp_path):
    monkeypatch.setattr(memory, "CLEAR_REFS", tmp_path / "missing" / "clear_refs")
    peak = memory.PeakMemory(torch.device("cpu"))
    peak.start()
    figures = peak.stop()
    assert figures["rss_scope"] == "process" and figures["peak_rss_mb"] > 0


def test_summary_prints_the_run_peak(tmp_path, cli):
    path = tmp_path / "p.toml"
    path.write_text('[load]\ntype = "synthetic"\nnodes = 50\nfeatures = 4\n')
    code, out, _ = cli("run", path, "--out-dir", tmp_path / "out", "--quiet")
    assert code == 0
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    peak = record["memory"]
    assert f"  peak memory: {peak['peak_rss_mb']:.0f} MB resident (load)" in out.splitlines()
