"""The core policy: the split per workload, overrides, and what a run applies and restores."""

from __future__ import annotations

import pytest
import torch

from graphflow.runtime.cores import CoreOptions, CorePlan, applied, plan, policy
from graphflow.errors import ConfigError
from graphflow.manager import create_host
from graphflow.plugin import hookimpl


def test_policy_splits_the_cores_per_workload():
    assert policy("full", 8) == CorePlan("full", 8, threads=8, workers=0)
    assert policy("walks", 8) == CorePlan("walks", 8, threads=1, workers=8)
    # Few cores: sampling inline, every core trains (measured fastest on 2 cores).
    assert policy("sampled", 2) == CorePlan("sampled", 2, threads=2, workers=0)
    big = policy("sampled", 16)
    assert big.workers >= 1 and big.threads + big.workers == 16


def test_overrides_win_field_by_field_first_one_first():
    p = plan("sampled", 8, CoreOptions(workers=3), {"workers": 1, "threads": 2})
    assert (p.workers, p.threads, p.overridden) == (3, 2, ("threads", "workers"))
    alone = plan("sampled", 8, CoreOptions(workers=1))
    assert (alone.threads, alone.workers) == (7, 1)  # the rest of the cores train
    assert plan("walks", 4, {"worker_threads": 2}).worker_threads == 2
    with pytest.raises(ValueError, match="unknown workload 'gpu'"):
        policy("gpu", 2)


def test_applied_sets_the_threads_and_restores_them_even_on_error():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError):
        with applied(CorePlan("full", 1, threads=1, workers=0)):
            assert torch.get_num_threads() == 1
            raise RuntimeError("stage failed")
    assert torch.get_num_threads() == before


class ThreadProbe:
    """Notes torch's thread count and the stage's core plan at every epoch."""

    def __init__(self):
        self.seen: dict[str, tuple[int, CorePlan]] = {}

    @hookimpl
    def graphflow_epoch_end(self, ctx, stage, epoch, metrics):
        self.seen[stage.section] = (torch.get_num_threads(), ctx.cores)


TWO_STAGES = """
[pipeline]
cores = 2

[load]
type = "synthetic"
nodes = 60
classes = 2
features = 4

[model]
type = "gcn"
hidden = 4

[[train]]
type = "node_classification"
epochs = 1
checkpoint = false

[train.cores]
threads = 1

[[train]]
type = "node_classification"
epochs = 1
checkpoint = false

[train.sample]
type = "neighbor"
fanouts = [3, 3]
batch_size = 32

[train.cores]
threads = 2
workers = 1
"""


def test_two_stages_get_their_own_settings_and_the_callers_come_back(run_toml):
    probe = ThreadProbe()
    host = create_host()
    host.pm.register(probe, name="probe")
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # the user's own setting, different from the second stage's
    try:
        result = run_toml(TWO_STAGES, host=host)
        assert torch.get_num_threads() == 1  # restored after the run
    finally:
        torch.set_num_threads(before)
    threads0, plan0 = probe.seen["train.0"]
    threads1, plan1 = probe.seen["train.1"]
    assert (threads0, plan0.workload, plan0.threads, plan0.workers) == (1, "full", 1, 0)
    assert (threads1, plan1.workload, plan1.threads, plan1.workers) == (2, "sampled", 2, 1)
    stages = {s["section"]: s for s in result.record["stages"]}
    assert stages["train.0"]["cores"] == {"workload": "full", "cores": 2, "threads": 1,
                                          "workers": 0, "worker_threads": 1,
                                          "overridden": ["threads"], "source": "policy"}
    assert stages["train.1"]["cores"]["workers"] == 1
    assert "cores" not in stages["load"]
    assert result.record["config"]["train"][1]["cores"] == {"threads": 2, "workers": 1}


@pytest.mark.parametrize("override, message", [
    ("pipeline.cores=-1", r"pipeline.cores: must be >= 0"),
    ("train.0.cores.threads=0", r"\[train.0.cores\] cores: cores.threads = 0: must be >= 1"),
    ("train.0.cores=3", r"\[train.0.cores\] must be a table"),
])
def test_bad_core_settings_name_the_key(run_toml, override, message):
    with pytest.raises(ConfigError, match=message):
        run_toml(TWO_STAGES, [override])
