"""``pipeline.seeds`` / ``graphflow run --seeds``: one run per seed in its own folder, the
summary's means and sample standard deviations, a failing seed, and bad input."""

import json
import statistics

import pytest

from graphflow.config import load_config, validate_config
from graphflow.errors import ConfigError, GraphflowError
from graphflow.experiments.seeds import format_summary, parse_seeds, run_seeds, summarize
from graphflow.plugin import hookimpl
from graphflow.runner import run_pipeline

PIPELINE = """
[pipeline]
name = "seeds"
{seed}
[load]
type = "synthetic"
nodes = 60
classes = 3
features = 4
[model]
type = "gcn"
hidden = 4
[train]
type = "node_classification"
epochs = 2
checkpoint = false
"""


def write(tmp_path, seed="seed = 0"):
    path = tmp_path / "p.toml"
    path.write_text(PIPELINE.format(seed=seed))
    return path


def test_run_seeds_writes_each_seed_run_and_the_mean_and_sample_std(tmp_path, cli):
    path, out = write(tmp_path), tmp_path / "out"
    code, stdout, err = cli("run", path, "--seeds", "0-1", "--out-dir", out, "--quiet")
    assert code == 0, err
    runs = [json.loads((out / f"seed-{s}" / "run.json").read_text()) for s in (0, 1)]
    assert [r["seed"] for r in runs] == [0, 1]
    assert [r["config"]["pipeline"]["seed"] for r in runs] == [0, 1]
    assert all(r["status"] == "ok" for r in runs)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seeds"] == [0, 1] and summary["status"] == "ok"
    assert [r["path"] for r in summary["runs"]] == [str(out / "seed-0"), str(out / "seed-1")]
    acc = summary["metrics"]["test_acc"]
    values = [r["metrics"]["test_acc"] for r in runs]
    assert acc["values"] == values and acc["n"] == 2
    assert acc["mean"] == pytest.approx(statistics.fmean(values))
    assert acc["std"] == pytest.approx(statistics.stdev(values))  # sample std (n - 1)
    line = next(x for x in stdout.splitlines() if x.split()[:1] == ["test_acc"])
    assert line.split() == ["test_acc", f"{acc['mean']:.4g}", "±", f"{acc['std']:.4g}", "(2",
                            "seeds)"]
    assert 'ran "seeds" with 2 seeds (0, 1)' in stdout
    # a seed's run is the one-seed run of that seed (seeded CPU runs repeat)
    code, _, err = cli("run", path, "--set", "pipeline.seed=1", "--out-dir", tmp_path / "one",
                       "--quiet")
    assert code == 0, err
    one = json.loads((tmp_path / "one" / "run.json").read_text())
    assert one["metrics"] == runs[1]["metrics"]


def test_seeds_in_the_pipeline_file_and_validate(tmp_path, cli):
    path = write(tmp_path, seed="seeds = [3, 1]")
    code, stdout, err = cli("validate", path)
    assert code == 0, err
    assert "seeds: 3, 1" in stdout


class FailOnSeed:
    def __init__(self, seed):
        self.seed = seed

    @hookimpl
    def graphflow_pipeline_start(self, ctx):
        if ctx.seed == self.seed:
            raise ConfigError(f"seed {ctx.seed} refused by the test plugin")


def test_a_failing_seed_stops_the_series_and_the_summary_keeps_the_runs_before(tmp_path, host):
    config = load_config(write(tmp_path, seed="seeds = [0, 5, 7]"), host.registry,
                         out_dir=tmp_path / "out")
    host.pm.register(FailOnSeed(5), name="fail-on-seed")
    with pytest.raises(GraphflowError, match="seed 5 refused"):
        run_seeds(config, host, quiet=True)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert [(r["seed"], r["status"]) for r in summary["runs"]] == [(0, "ok"), (5, "failed")]
    assert summary["metrics"]["test_acc"]["n"] == 1 and summary["metrics"]["test_acc"]["std"] \
        is None
    assert not (tmp_path / "out" / "seed-7").exists()


def test_run_pipeline_refuses_several_seeds(tmp_path, host):
    config = load_config(write(tmp_path), host.registry, seeds=[0, 1])
    assert config.settings.seeds == (0, 1) and "seeds" in config.resolved()["pipeline"]
    with pytest.raises(ConfigError, match="run_pipeline runs one seed"):
        run_pipeline(config, host)


def test_summarize_skips_missing_and_non_finite_values():
    records = [{"metrics": {"a": 1.0, "b": 2}}, {"metrics": {"a": 3.0, "b": float("nan")}},
               {"metrics": {"a": 5.0, "c": "text"}}]
    out = summarize(records)
    assert out["a"] == {"values": [1.0, 3.0, 5.0], "mean": 3.0, "std": 2.0, "n": 3}
    assert out["b"] == {"values": [2.0], "mean": 2.0, "std": None, "n": 1}
    assert "c" not in out
    assert format_summary(out) == ["a  3 ± 2  (3 seeds)", "b  2 ± -  (1 seed)"]


@pytest.mark.parametrize("text, seeds", [("0-3", [0, 1, 2, 3]), ("4", [4]),
                                         ("0,2, 5-6", [0, 2, 5, 6])])
def test_parse_seeds(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text, message", [
    ("3-1", "empty range 3-1; write the lower seed first"),
    ("a", "'a' is not a seed or a range"),
    ("0-2,1", "seed 1 is given twice"),
    ("", "'' is not a seed or a range"),
])
def test_parse_seeds_bad_input(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_seeds(text)


@pytest.mark.parametrize("seeds, message", [
    ("[]", "pipeline.seeds: expected a non-empty list of integers"),
    ("3", "pipeline.seeds: expected a non-empty list of integers"),
    ("[0, 1, 1]", "pipeline.seeds: seed 1 is given twice"),
    ("[0, 1.5]", "pipeline.seeds: 1.5 is not an integer >= 0"),
    ('[0, "1"]', "pipeline.seeds: '1' is not an integer >= 0"),
    ("[true]", "pipeline.seeds: True is not an integer >= 0"),
    ("[-1]", "pipeline.seeds: -1 is not an integer >= 0"),
])
def test_bad_seeds_in_the_pipeline_are_one_config_error(tmp_path, host, seeds, message):
    import tomllib

    raw = tomllib.loads(PIPELINE.format(seed=f"seeds = {seeds}"))
    with pytest.raises(ConfigError, match=message):
        validate_config(raw, host.registry, source=tmp_path / "p.toml")


def test_seed_and_seeds_together_and_nproc_are_refused_in_one_line(tmp_path, cli):
    path = write(tmp_path, seed="seed = 0\nseeds = [0, 1]")
    code, _, err = cli("run", path)
    assert code == 1
    assert err.strip() == (f"graphflow: error: {path}: pipeline.seed and pipeline.seeds both "
                           f"given: keep one (graphflow run --seeds replaces both; graphflow "
                           f"sweep takes sweep.seeds)")
    code, _, err = cli("run", write(tmp_path), "--seeds", "0-1", "--nproc", "2")
    assert code == 1 and "not with --nproc" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli("run", write(tmp_path), "--seeds", "1,1")
    assert code == 1 and "seed 1 is given twice" in err
