"""``graphflow run --nproc N`` and ``torchrun -m graphflow run``: DDP on gloo over loopback."""

import json
from pathlib import Path

import pyarrow.parquet as pq

from graphflow.distributed.nproc import free_port


def _record(out: Path) -> dict:
    return json.loads((out / "run.json").read_text())


def test_nproc2_sampled_matches_one_process(tmp_path, run_toml, spawn, sbm_sage,
                                           fake_entry_points, monkeypatch):
    single = run_toml(sbm_sage, out_dir=tmp_path / "one").record
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(sbm_sage)
    # A broken third-party plugin is reported once, by the launcher, not again by a worker.
    fake_entry_points("acme", "import no_such_module_xyz\n", dist="acme-gnn")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    done = spawn(["-m", "graphflow", "run", pipeline, "--nproc", "2", "--out-dir",
                  tmp_path / "two"], timeout=120)
    assert done.returncode == 0, done.stderr
    rec = _record(tmp_path / "two")
    assert (rec["status"], rec["world_size"], rec["backend"]) == ("ok", 2, "gloo")
    digests = rec["replica_digests"]["train"]
    assert len(digests) == 2 and digests[0] == digests[1]  # DDP kept the replicas equal
    # The two ranks sample other batches than one process does: the same accuracy within
    # two of the 60 test nodes.
    assert abs(rec["metrics"]["test_acc"] - single["metrics"]["test_acc"]) <= 2 / 60 + 1e-6
    assert rec["metrics"]["test_acc"] > 0.9
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("run.json")) == \
        [Path("one/run.json"), Path("two/run.json")]
    assert pq.read_table(tmp_path / "two" / "predictions.parquet").num_rows == 600
    assert done.stdout.count('graphflow: ran "ddp"') == 1  # rank 0 reports, once
    assert done.stderr.count('graphflow: warning: plugin "acme"') == 1, done.stderr
    epochs = [json.loads(line)["epoch"]
              for line in (tmp_path / "two" / "metrics.jsonl").read_text().splitlines()]
    assert epochs == list(range(1, 21))


def test_torchrun_full_batch_then_resume_with_nproc(tmp_path, spawn, sbm_sage):
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(sbm_sage.replace('[sample]\ntype = "neighbor"\nfanouts = [5, 5]\n'
                                         'batch_size = 32\nprefetch = 0\n', ""))
    out = tmp_path / "out"
    def torchrun(out_dir: Path, epochs: int) -> list:
        return ["-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node", "2",
                "--master-addr", "127.0.0.1", "--master-port", str(free_port()),
                "-m", "graphflow", "run", pipeline, "--out-dir", out_dir, "--quiet",
                "--set", f"train.epochs={epochs}"]

    first = spawn(torchrun(out, 3), timeout=120)
    assert first.returncode == 0, first.stderr
    assert _record(out)["world_size"] == 2 and "sample" not in _record(out)["config"]
    resumed = spawn(["-m", "graphflow", "run", pipeline, "--nproc", "2", "--out-dir", out,
                     "--resume", "--set", "train.epochs=6"], timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming after epoch 3" in resumed.stderr
    straight = spawn(torchrun(tmp_path / "straight", 6), timeout=120)
    assert straight.returncode == 0, straight.stderr
    rec, ref = _record(out), _record(tmp_path / "straight")
    assert rec["replica_digests"] == ref["replica_digests"]  # resumed == uninterrupted
    assert rec["metrics"] == ref["metrics"]
    epochs = [json.loads(line)["epoch"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert epochs == [1, 2, 3, 4, 5, 6]


def test_nproc_refuses_a_task_that_cannot_run_data_parallel(cli, tmp_path):
    path = tmp_path / "walks.toml"
    path.write_text('[load]\ntype = "networkx"\ngraph = "karate_club"\n'
                    '[sample]\ntype = "deepwalk"\n[train]\ntype = "skipgram"\n')
    code, out, err = cli("run", path, "--nproc", "2", "--out-dir", tmp_path / "o")
    assert code == 1
    assert err.strip() == ("graphflow: error: [train] skipgram cannot run data-parallel "
                           "(--nproc): it has no data-parallel training yet; run it without "
                           "--nproc (or with --nproc 1)")
    assert not (tmp_path / "o").exists()


def test_nproc_zero_is_refused(cli, tmp_path, sbm_sage):
    path = tmp_path / "p.toml"
    path.write_text(sbm_sage)
    code, out, err = cli("run", path, "--nproc", "0", "--out-dir", tmp_path / "o")
    assert code == 1
    assert err.strip() == ("graphflow: error: --nproc 0: give the number of worker processes "
                           "(>= 1)")
