"""``graphflow sweep``: a real Optuna study over tiny runs, resumed after SIGTERM; the
[sweep] table's bad input; pruning through the epoch-end hook."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from graphflow.manager import create_host

SWEEP = """
[pipeline]
name = "sw"
[load]
type = "synthetic"
nodes = 90
classes = 3
features = 6
[model]
type = "gcn"
hidden = 4
[train]
type = "node_classification"
epochs = 3
checkpoint = false
[sweep]
metric = "val_acc"
trials = {trials}
sampler = "random"
seeds = [0]
[sweep.params]
{params}
"""
PARAMS = '"model.hidden" = [4, 8]\n"train.lr" = { low = 0.001, high = 0.1, log = true }\n'


def write(tmp_path, trials=4, params=PARAMS, extra=""):
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP.format(trials=trials, params=params) + extra)
    return path


def finished_runs(root: Path) -> dict[Path, float]:
    out = {}
    for record in root.glob("trial-*/seed-*/run.json"):
        if json.loads(record.read_text())["status"] == "ok":
            out[record] = record.stat().st_mtime_ns
    return out


def test_a_sweep_stopped_by_sigterm_resumes_without_repeating_finished_trials(tmp_path, cli):
    path, root = write(tmp_path), tmp_path / "sweep"
    # trials long enough (about a second) that SIGTERM lands before the last one ends
    path.write_text(path.read_text().replace("epochs = 3", "epochs = 600"))
    cmd = [sys.executable, "-m", "graphflow", "sweep", str(path), "--out-dir", str(root)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while len(finished_runs(root)) < 2 and proc.poll() is None:
            assert time.monotonic() < deadline, "the sweep did not finish 2 trials in time"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    before = finished_runs(root)
    assert 2 <= len(before) < 4, out + err
    # the resume in this process: the subprocess was for the signal
    code, out, err = cli("sweep", path, "--out-dir", root)
    assert code == 0, err
    assert f"resuming sw: {len(before)} of 4 trials done" in out
    after = finished_runs(root)
    assert {p: after[p] for p in before} == before  # finished trials were not run again
    summary = json.loads((root / "summary.json").read_text())
    assert summary["trials"] == 4 and summary["complete"] == 4
    table = pq.read_table(root / "trials.parquet").to_pylist()
    assert len(table) == 4 and all(r["state"] == "complete" for r in table)
    best = max(table, key=lambda r: r["val_acc"])
    assert summary["best_value"] == best["val_acc"]
    assert summary["best_test"]["test_acc"] == best["test_acc"]
    run = json.loads(next((root / f"trial-{best['trial']:04d}").glob("seed-*/run.json"))
                     .read_text())
    assert run["metrics"]["val_acc"] == best["val_acc"]
    assert run["config"]["model"]["hidden"] == best["params.model.hidden"]
    best_toml = (root / "best.toml").read_text()
    assert "[sweep]" not in best_toml and f"hidden = {best['params.model.hidden']}" in best_toml


@pytest.mark.parametrize("params, message", [
    ('"model.hiden" = [4, 8]\n',
     """[sweep.params] model.hiden: unknown option for 'gcn' (did you mean "hidden"?)"""),
    ('"train.lr" = { low = 0.1, high = 0.1 }\n', "empty range: low 0.1 must be below high 0.1"),
    ('"train.lr" = { low = 0.0, high = 0.1, log = true }\n', "a log range needs low > 0"),
    ('"model.hidden" = []\n', "empty list of choices"),
    ('"train.lr" = { low = -0.1, high = 0.1, log = true }\n',
     "a log range needs low > 0, got -0.1"),
    ('"train.lr" = { low = 0.2, high = 0.1 }\n', "empty range: low 0.2 must be below high 0.1"),
    ('"modle.hidden" = [4]\n',
     """[sweep.params] modle.hidden: unknown section 'modle' (did you mean "model"?)"""),
])
def test_bad_search_spaces_are_one_line(tmp_path, cli, params, message):
    code, out, err = cli("sweep", write(tmp_path, params=params), "--out-dir", tmp_path / "s")
    assert code == 1, err
    assert message in err, err
    assert len(err.splitlines()) == 1, err


def test_a_metric_the_task_does_not_produce_and_another_study(tmp_path, cli):
    path = write(tmp_path, trials=1, extra="")
    text = path.read_text().replace('metric = "val_acc"', 'metric = "val_auc"')
    path.write_text(text)
    code, out, err = cli("sweep", path, "--out-dir", tmp_path / "s")
    assert code == 1 and "the runs have no metric 'val_auc'" in err, err
    assert "val_acc" in err and len(err.splitlines()) == 1
    other = write(tmp_path, trials=1)
    other.write_text(other.read_text().replace('name = "sw"', 'name = "other"'))
    code, out, err = cli("sweep", other, "--out-dir", tmp_path / "s")
    assert code == 1 and "holds the study 'sw', not 'other'" in err, err
    space = write(tmp_path, trials=1, params='"model.hidden" = [4, 16]\n')
    code, out, err = cli("sweep", space, "--out-dir", tmp_path / "s")
    assert code == 1 and "holds a study of another search space" in err, err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("line, message", [
    ("jobs = 0", "sweep.trials and sweep.jobs must be >= 1"),
    ("pruner_warmup = -1", "sweep.pruner_warmup = -1: must be >= 0"),
    ('sampler = "tpee"', 'sweep.sampler: unknown "tpee" (did you mean "tpe"?)'),
    ("jbos = 2", 'sweep.jbos: unknown key (did you mean "jobs"?)'),
])
def test_bad_sweep_settings_are_one_line(tmp_path, cli, line, message):
    path = write(tmp_path)
    path.write_text(path.read_text().replace('sampler = "random"\n', line + "\n"))
    code, out, err = cli("sweep", path, "--out-dir", tmp_path / "s")
    assert code == 1 and message in err, err
    assert len(err.splitlines()) == 1, err


def test_pruning_through_the_epoch_end_hook_records_a_pruned_run(run_toml, tmp_path):
    import optuna

    from graphflow.experiments.sweep import Pruned, _Pruning

    study = optuna.create_study(direction="maximize",
                                pruner=optuna.pruners.ThresholdPruner(upper=-1.0))
    trial = study.ask()
    host = create_host()
    pruning = _Pruning(trial, "val_acc")
    host.pm.register(pruning, name="pruning")
    text = SWEEP.format(trials=1, params=PARAMS)
    with pytest.raises(Pruned, match="val_acc .* at epoch 1"):
        run_toml(text, host=host)
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["status"] == "pruned"
    assert record["error"].startswith("Pruned: val_acc")
    assert len(pruning.reported) == 1 and trial.should_prune()


def test_the_cora_sweep_example_runs_as_documented(tmp_path, cli):
    from graphflow.testing import REPO_ROOT, planetoid_dir

    if not (planetoid_dir() / "ind.cora.x").exists():
        pytest.skip(f"raw Planetoid files not found in {planetoid_dir()}")
    example = REPO_ROOT / "examples" / "cora_gcn_sweep.toml"
    text = example.read_text()
    for key in ('"model.hidden"', '"train.lr"', '"model.dropout"', '"train.weight_decay"',
                "trials = 30", 'sampler = "tpe"', 'pruner = "median"'):
        assert key in text
    # the same file, cut short: 2 trials of 3 epochs in this process
    code, out, err = cli("sweep", example, "--out-dir", tmp_path / "s", "--set",
                         f"load.root={planetoid_dir()}", "--set", "sweep.trials=2", "--set",
                         "sweep.jobs=1", "--set", "train.epochs=3")
    assert code == 0, err
    summary = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert summary["complete"] == 2 and 0 <= summary["best_test"]["test_acc"] <= 1


def test_a_grid_sweep_runs_each_point_once_and_stops(tmp_path, cli):
    path = write(tmp_path, trials=5, params='"model.hidden" = [4, 8]\n')
    path.write_text(path.read_text().replace('sampler = "random"', 'sampler = "grid"'))
    code, out, err = cli("sweep", path, "--out-dir", tmp_path / "s")
    assert code == 0, err
    table = pq.read_table(tmp_path / "s" / "trials.parquet").to_pylist()
    assert sorted(r["params.model.hidden"] for r in table) == [4, 8]
