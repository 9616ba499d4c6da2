"""`graphflow run` and `graphflow validate`: exit codes and one-line errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def pipeline(tmp_path, toy_pipeline, toy_entry_point) -> Path:
    path = tmp_path / "p.toml"
    path.write_text(toy_pipeline)
    return path


def test_run_prints_metrics_and_outputs(cli, pipeline, tmp_path):
    code, out, err = cli("run", pipeline, "--out-dir", tmp_path / "out", "--quiet")
    assert code == 0, err
    assert out.startswith('graphflow: ran "toy" in ')
    assert "metrics: nodes=6  " in out
    assert f"{tmp_path / 'out' / 'run.json'}  (record)" in out
    assert f"{tmp_path.resolve() / 'emb.txt'}  (embeddings)" in out
    assert json.loads((tmp_path / "out" / "run.json").read_text())["status"] == "ok"


def test_default_out_dir_is_runs_name(cli, pipeline, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("run", pipeline, "--quiet", "--set", "pipeline.name=named")
    assert code == 0, err
    assert (tmp_path / "runs" / "named" / "run.json").exists()


def test_run_reports_loaded_graph(cli, pipeline, tmp_path):
    code, out, err = cli("run", pipeline, "--out-dir", tmp_path / "o")
    assert code == 0
    assert "loaded tiny: 6 nodes, 9 edges, 4 features, 2 classes" in err


def test_validate_ok(cli, pipeline):
    code, out, err = cli("validate", pipeline)
    assert code == 0, err
    assert out.startswith('ok: pipeline "toy"')
    assert "load:tiny -> train:count -> export.0:text" in out


def test_validate_wrong_key_suggests(cli, pipeline):
    pipeline.write_text(pipeline.read_text().replace("epochs = 3", "epoch = 5"))
    code, out, err = cli("validate", pipeline)
    assert code == 1
    assert "train.epoch" in err and 'did you mean "epochs"?' in err
    assert "Traceback" not in err and out == ""


def test_validate_runs_component_checks(cli, pipeline, tmp_path):
    pipeline.write_text(pipeline.read_text().replace('type = "tiny"', 'type = "tiny"\npath = "gone.tsv"'))
    code, _, err = cli("validate", pipeline)
    assert code == 1
    assert f"file not found: {tmp_path.resolve() / 'gone.tsv'}" in err


def test_bad_toml(cli, pipeline):
    pipeline.write_text("[pipeline\nname = 1\n")
    code, _, err = cli("run", pipeline)
    assert code == 1
    assert f"{pipeline}: invalid TOML" in err and "(at line 1, column 10)" in err


def test_unknown_type_lists_choices(cli, pipeline):
    pipeline.write_text(pipeline.read_text().replace('type = "count"', 'type = "cont"'))
    code, _, err = cli("validate", pipeline)
    assert code == 1
    assert 'unknown task type "cont" (did you mean "count"?); choices:' in err


def test_missing_pipeline_file(cli, tmp_path):
    code, _, err = cli("run", tmp_path / "absent.toml")
    assert code == 1
    assert err.strip() == f"graphflow: error: pipeline file not found: {tmp_path / 'absent.toml'}"


def test_data_error_in_a_stage(cli, pipeline, tmp_path):
    code, _, err = cli("run", pipeline, "--out-dir", tmp_path / "o", "--set", 'load.fail="data"')
    assert code == 1
    assert err.strip().splitlines()[-1] == (
        "graphflow: error: [load] tiny: edges.tsv:3: expected 2 columns, got 1")


def test_plugin_bug_names_plugin_and_stage_and_hides_traceback(cli, pipeline, tmp_path):
    code, _, err = cli("run", pipeline, "--out-dir", tmp_path / "o", "--set", 'load.fail="bug"')
    assert code == 1
    assert ('graphflow: error: plugin "toy" failed in stage load (tiny): '
            "ZeroDivisionError: division by zero") in err
    assert "run again with --debug for the traceback" in err
    assert "Traceback" not in err


def test_a_rejected_option_value_is_one_line(cli, tmp_path):
    # the real node_classification task's own check (its options' __post_init__)
    example = Path(__file__).resolve().parents[2] / "examples" / "quickstart.toml"
    code, _, err = cli("validate", example, "--set", "train.lr=-1")
    assert code == 1
    assert err.strip() == (f"graphflow: error: {example}: [train] node_classification: "
                           "lr must be > 0, got -1.0")  # no "run again with --debug" hint


@pytest.mark.parametrize("before", [False, True], ids=["after the command", "before it"])
def test_debug_shows_the_traceback(cli, pipeline, tmp_path, before):
    args = ["run", pipeline, "--out-dir", tmp_path / "o", "--set", 'load.fail="bug"']
    # `graphflow --debug run ...` (where --help's usage puts it) as well as `run ... --debug`
    code, _, err = cli(*(["--debug", *args] if before else [*args, "--debug"]))
    assert code == 1
    assert "Traceback (most recent call last)" in err and "ZeroDivisionError" in err
    assert "run again with --debug" not in err


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="needs a machine without CUDA")
def test_wrong_device(cli, pipeline):
    code, _, err = cli("validate", pipeline, "--device", "cuda")
    assert code == 1
    assert 'device "cuda" requested but CUDA is not available' in err


def test_usage_errors_exit_2(cli, pipeline):
    assert cli("run")[0] == 2
    assert cli("frobnicate")[0] == 2
    assert cli("run", pipeline, "--bogus")[0] == 2


def graphflow_exe() -> str:
    exe = Path(sys.executable).parent / "graphflow"
    return str(exe)


def test_console_script_error_has_no_traceback(tmp_path):
    """The real installed command, in a real process."""
    path = tmp_path / "p.toml"
    path.write_text('[load]\ntype = "synthetc"\n')
    proc = subprocess.run([graphflow_exe(), "validate", str(path)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "GRAPHFLOW_PROGRESS": "0"})
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"graphflow: error: {path}: load.type: unknown loader type")
    assert "Traceback" not in proc.stderr


def test_summary_prints_counts_in_full_and_scores_to_4_digits():
    from graphflow.cli.run import format_metric

    assert format_metric(169300) == "169300"
    assert format_metric(0.812345) == "0.8123"
    assert format_metric(12.0) == "12"


def test_help_and_usage_errors_do_not_load_torch_or_plugins():
    """`graphflow --help`, a command's --help and a usage error answer without importing torch,
    DGL or the plugins (about 2 s on a 2-core machine): only running a command loads them."""
    code = ("import sys\n"
            "from graphflow.cli.main import main\n"
            "for argv in (['--help'], ['run', '--help'], ['frobnicate'], ['launch', '--help']):\n"
            "    try:\n"
            "        main(argv)\n"
            "    except SystemExit as exc:\n"
            "        assert exc.code in (0, 2), (argv, exc.code)\n"
            "loaded = [m for m in ('torch', 'dgl', 'pluggy', 'graphflow_plugins') if m in sys.modules]\n"
            "assert not loaded, loaded\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "usage: graphflow" in proc.stdout
