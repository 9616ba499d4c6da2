"""Skip-gram checkpoints at walk-batch boundaries: a run that crashes resumes from the last
saved batch and, with one worker, ends with the embeddings of an uninterrupted run."""

from __future__ import annotations

import pytest
import torch

from graphflow.train import checkpoint as ckpt
from graphflow_plugins.embeddings.samplers import WalkSampler

PIPELINE = """
[pipeline]
name = "sg"
seed = 0
device = "cpu"
[load]
type = "synthetic"
nodes = 120
classes = 2
features = 4
p_in = 0.1
p_out = 0.01
[sample]
type = "deepwalk"
walk_length = 8
walks_per_node = 4
batch_size = 60
[train]
type = "skipgram"
dim = 8
window = 3
epochs = 2
batch_size = 16
workers = 1
checkpoint_seconds = {seconds}
"""


class Crash(RuntimeError):
    """The fault injected into the walk sampler: the process dying mid-run."""


def crash_at_walk_batch(monkeypatch, k: int) -> list[int]:
    """Make the walk sampler fail on its ``k``-th call (an injected fault, as a crash
    of the machine would stop the run); the calls are counted in the returned list."""
    calls: list[int] = []
    real = WalkSampler.sample

    def sample(self, graph, seeds, **kwargs):
        calls.append(1)
        if len(calls) == k:
            raise Crash("the machine went down")
        return real(self, graph, seeds, **kwargs)

    monkeypatch.setattr(WalkSampler, "sample", sample)
    return calls


def test_a_crashed_run_resumes_from_the_last_batch_and_ends_as_an_uninterrupted_one(
        run_toml, tmp_path, monkeypatch):
    text = PIPELINE.format(seconds=0)  # a checkpoint after every walk batch
    whole = run_toml(text, out_dir=tmp_path / "whole")
    assert not (whole.out_dir / "train_state.pt").exists()  # removed when training ends

    # 120 nodes x 4 walks = 480 walks per epoch, 8 walk batches of 60: crash in epoch 2
    with monkeypatch.context() as m:
        crash_at_walk_batch(m, 11)
        with pytest.raises(Exception, match="the machine went down"):
            run_toml(text, out_dir=tmp_path / "crashed")
    state = ckpt.load(tmp_path / "crashed" / "train_state.pt")
    assert (state["epoch"], state["batch"], state["done"]) == (2, 2, 480 + 2 * 60)

    resumed = run_toml(text, out_dir=tmp_path / "crashed", resume=True)
    assert torch.equal(resumed.ctx.artifacts.embeddings, whole.ctx.artifacts.embeddings)
    assert resumed.record["metrics"]["skipgram_loss"] == whole.record["metrics"]["skipgram_loss"]
    assert not (tmp_path / "crashed" / "train_state.pt").exists()


def test_a_crash_before_the_interval_is_up_leaves_no_state_and_off_saves_none(
        run_toml, tmp_path, monkeypatch):
    for seconds, extra in ((3600, ""), (0, "checkpoint = false\n")):
        with monkeypatch.context() as m:
            crash_at_walk_batch(m, 5)
            with pytest.raises(Exception, match="the machine went down"):
                run_toml(PIPELINE.format(seconds=seconds) + extra,
                         out_dir=tmp_path / f"run{seconds}")
        assert not (tmp_path / f"run{seconds}" / "train_state.pt").exists()


def test_checkpoint_seconds_must_not_be_negative(run_toml):
    from graphflow.errors import ConfigError

    with pytest.raises(ConfigError, match=r"checkpoint_seconds = -1\.0: must be >= 0"):
        run_toml(PIPELINE.format(seconds=-1))


def test_a_crash_part_way_through_a_walk_batch_resumes_after_its_last_step(
        run_toml, tmp_path, monkeypatch):
    from graphflow.embeddings.skipgram import SkipGram

    text = PIPELINE.format(seconds=0)
    whole = run_toml(text, out_dir=tmp_path / "whole")
    calls: list[int] = []
    real = SkipGram.step

    def step(self, walks, lr, *args, **kwargs):  # the machine dies in the 10th step
        calls.append(1)
        if len(calls) == 10:
            raise Crash("the machine went down")
        return real(self, walks, lr, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(SkipGram, "step", step)
        with pytest.raises(Exception, match="the machine went down"):
            run_toml(text, out_dir=tmp_path / "crashed")
    # walk batches of 60 walks, steps of 16: 4 steps a batch; step 10 is batch 3's second
    state = ckpt.load(tmp_path / "crashed" / "train_state.pt")
    assert (state["epoch"], state["batch"], state["step"], state["done"]) == (1, 2, 1, 136)
    resumed = run_toml(text, out_dir=tmp_path / "crashed", resume=True)
    assert torch.equal(resumed.ctx.artifacts.embeddings, whole.ctx.artifacts.embeddings)
    assert resumed.record["metrics"]["skipgram_loss"] == pytest.approx(
        whole.record["metrics"]["skipgram_loss"], rel=1e-12)
