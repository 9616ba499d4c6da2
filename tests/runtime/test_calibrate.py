"""graphflow.runtime.calibrate: machine choices measured once, cached per CPU signature, overridable."""

from __future__ import annotations

import json
import re

import pytest
import torch
import torch.nn.functional as F

from graphflow.runtime import calibrate, cores
from graphflow.errors import ConfigError
from graphflow.sparse import gemm


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A temporary cache folder, calibration on (``auto``), nothing remembered, and a quiet
    machine (the load average read as 0: the suite's own load must not make measurements
    "busy"; the busy tests set it)."""
    folder = tmp_path / "cache"
    monkeypatch.setattr(calibrate.os, "getloadavg", lambda: (0.0,) * 3)
    monkeypatch.setenv(calibrate.ENV_DIR, str(folder))
    monkeypatch.setenv(calibrate.ENV_MODE, "auto")
    calibrate.forget()
    yield folder
    calibrate.forget()


def test_cache_folder_follows_the_variable_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv(calibrate.ENV_DIR, str(tmp_path / "mine"))
    assert calibrate.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(calibrate.ENV_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert calibrate.cache_dir() == tmp_path / "xdg" / "graphflow"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert calibrate.cache_dir() == tmp_path / "home" / ".cache" / "graphflow"


def test_a_bad_mode_is_one_line_naming_the_variable(monkeypatch):
    monkeypatch.setenv(calibrate.ENV_MODE, "forse")
    with pytest.raises(ConfigError, match=r'GRAPHFLOW_CALIBRATE="forse": expected auto, force '
                                          r'or off \(did you mean "force"\?\); set one of '
                                          r'them or unset it'):
        calibrate.mode()
    assert calibrate.mode("OFF") == "off"


def test_the_signature_names_the_cpu_its_isa_the_libraries_and_the_caps(monkeypatch):
    sig = calibrate.signature()
    cpu = sig["cpu"]
    assert cpu["model_name"] and cpu["cores"] >= 1
    assert set(cpu["isa"]) <= set(open("/proc/cpuinfo").read().split())
    assert sig["versions"]["torch"] == torch.__version__ and sig["versions"]["dgl"]
    key = calibrate.signature_key(sig)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")  # an emulated older CPU: its own entry
    assert calibrate.signature()["caps"]["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    assert calibrate.signature_key(calibrate.signature()) != key


def test_isa_flags_keep_what_picks_kernels():
    flags = "fpu sse2 avx avx2 fma avx512f avx512_bf16 amx_tile avx_vnni sha_ni".split()
    assert calibrate.isa_flags(flags) == ["amx_tile", "avx", "avx2", "avx512_bf16", "avx512f",
                                          "avx_vnni", "fma"]


def test_gemm_is_measured_once_cached_and_read_back(cache):
    first = calibrate.gemm_choices()
    if first["source"] == "no oneDNN":
        pytest.skip("torch without oneDNN: nothing to choose")
    assert first["source"] == "calibrated" and set(first["buckets"]) == set(gemm.BUCKETS)
    assert set(first["buckets"].values()) <= {"onednn", "torch"}
    for name, ms in first["ms"].items():  # the choice follows the timings
        want = "onednn" if ms["onednn"] < calibrate.ONEDNN_MARGIN * ms["torch"] else "torch"
        assert first["buckets"][name] == want
    files = list(cache.iterdir())
    assert [f.name for f in files] == [calibrate.cache_path().name]  # no partial file left
    stored = json.loads(files[0].read_text())
    assert stored["signature"] == json.loads(json.dumps(calibrate.signature()))
    key = f"gemm-t{torch.get_num_threads()}"  # one table per intra-op thread count
    assert stored[key]["buckets"] == first["buckets"] and stored[key]["threads"] == \
        torch.get_num_threads()
    calibrate.forget()  # a new process: read from the file, not measured
    again = calibrate.gemm_choices()
    assert again["source"] == "cache" and again["buckets"] == first["buckets"]
    assert again["measured_at"] == first["measured_at"]


def test_core_splits_are_measured_per_budget_and_fit_it(cache):
    found = calibrate.core_choices(1)
    assert found["source"] == "calibrated" and found["budget"] == 1
    assert set(found["plans"]) == {"sampled", "walks", "full"}
    for workload, split in found["plans"].items():
        assert split["threads"] == 1 and split["worker_threads"] == 1, (workload, split)
        assert split["workers"] <= 1
    assert all(ms for ms in found["ms"].values())
    assert calibrate.core_choices(1)["source"] == "cache"
    stored = json.loads(calibrate.cache_path().read_text())
    assert stored["cores-1"]["plans"] == found["plans"]


def test_force_measures_again_and_off_measures_nothing(cache, monkeypatch):
    first = calibrate.core_choices(1)
    monkeypatch.setenv(calibrate.ENV_MODE, "force")
    forced = calibrate.core_choices(1)
    assert forced["source"] == "calibrated" and forced["measured_at"] >= first["measured_at"]
    assert calibrate.core_choices(1)["source"] == "cache"  # once per process
    monkeypatch.setenv(calibrate.ENV_MODE, "off")
    assert calibrate.core_choices(1) == {"plans": {}, "source": "off"}
    off = calibrate.gemm_choices()
    assert off["source"] == "off" and set(off["buckets"]) == set(gemm.BUCKETS)


def test_measuring_leaves_the_seeded_random_state_alone(cache):
    # The benchmarks reseed and draw from torch's global generator; a run that measures
    # (cache miss, busy entry redone, each --nproc rank on its own) must build the same
    # initial weights and draw the same dropout masks as one that reads the cache.
    import random

    import numpy as np

    def draws() -> tuple:
        return torch.rand(4).tolist(), random.random(), float(np.random.rand())

    def seed() -> None:
        torch.manual_seed(7), random.seed(7), np.random.seed(7)

    seed()
    expected = draws()
    seed()
    assert calibrate.core_choices(1)["source"] == "calibrated"  # measured here
    assert draws() == expected
    seed()
    assert calibrate.core_choices(1)["source"] == "cache"
    assert draws() == expected


def test_a_corrupt_cache_warns_once_and_is_rewritten(cache, capsys):
    path = calibrate.cache_path()
    path.parent.mkdir(parents=True)
    path.write_text('{"format": 2, "signature": {"cpu": trunc')
    found = calibrate.core_choices(1)
    err = capsys.readouterr().err
    assert re.search(r"^graphflow: warning: calibration cache .*: ignored \(.*\); it will be "
                     r"measured again and rewritten$", err, re.M)
    assert "Warning:" not in err and ".py:" not in err  # one line, no Python warning
    assert found["source"] == "calibrated"
    assert json.loads(path.read_text())["cores-1"]["plans"] == found["plans"]
    # Another machine's file under this name (a copied home folder): the same.
    data = json.loads(path.read_text())
    data["signature"]["cpu"]["model_name"] = "another CPU"
    path.write_text(json.dumps(data))
    calibrate.forget()
    assert calibrate.core_choices(1)["source"] == "calibrated"
    assert "another machine's signature" in capsys.readouterr().err
    assert json.loads(path.read_text())["signature"]["cpu"]["model_name"] != "another CPU"


def test_measured_splits_start_the_plan_and_overrides_still_win():
    measured = {"sampled": {"workers": 1, "threads": 1, "worker_threads": 1}}
    p = cores.plan("sampled", 2, measured=measured)
    assert (p.workers, p.threads, p.source) == (1, 1, "measured")
    assert p.as_record()["source"] == "measured"
    forced = cores.plan("sampled", 2, {"workers": 0}, measured=measured)
    assert (forced.workers, forced.overridden, forced.source) == (0, ("workers",), "measured")
    assert cores.plan("full", 2, measured=measured).source == "policy"  # none for "full"
    too_big = {"sampled": {"workers": 1, "threads": 8, "worker_threads": 1}}
    assert cores.plan("sampled", 2, measured=too_big) == cores.policy("sampled", 2)


@pytest.mark.skipif(not gemm.onednn_available(), reason="torch without oneDNN (mkldnn)")
def test_auto_sends_each_bucket_to_its_measured_backend():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(256, 256, generator=g, requires_grad=True)
    narrow = torch.randn(16, 256, generator=g, requires_grad=True)
    x = torch.randn(1024, 256, generator=g)
    assert gemm.bucket(1024, 256, 256) == "large-wide"
    assert gemm.bucket(1024, 256, 16) == "small-narrow"
    table = dict.fromkeys(gemm.BUCKETS, "torch") | {"large-wide": "onednn"}
    with gemm.applied("auto", table) as info:
        assert info == {"requested": "auto", "backend": "per-bucket", "buckets": table}
        assert type(gemm.linear(x, w).grad_fn).__name__.startswith("_OneDNNLinear")
        assert "OneDNN" not in type(gemm.linear(x, narrow).grad_fn).__name__  # torch's
    with pytest.raises(ValueError, match="unknown buckets or backends"):
        with gemm.applied("auto", {"huge": "onednn"}):
            pass


@pytest.mark.skipif(not gemm.onednn_available(), reason="torch without oneDNN (mkldnn)")
def test_the_two_backends_differ_in_rounding_only():
    """What the seed guarantees: each backend repeats itself bit for bit, the two agree to
    float32 rounding (not bitwise), so a run repeats exactly for the same recorded choices."""
    g = torch.Generator().manual_seed(1)
    x, w = torch.randn(2048, 200, generator=g), torch.randn(256, 200, generator=g)
    out = {}
    for backend in ("torch", "onednn"):
        with gemm.applied(backend):
            out[backend] = [gemm.linear(x, w) for _ in range(2)]
        assert torch.equal(*out[backend])
    ref = F.linear(x.double(), w.double())
    for backend, (y, _) in out.items():
        torch.testing.assert_close(y.double(), ref, rtol=1e-5, atol=1e-4)


def test_a_run_records_where_its_choices_came_from(cache, tmp_path, toy_host, toy_pipeline):
    """cores = 1 keeps the measurement short; gemm = "torch" is an override (not measured)."""
    from graphflow.config import load_config
    from graphflow.runner import run_pipeline

    path = tmp_path / "p.toml"
    path.write_text(toy_pipeline.replace('seed = 7', 'seed = 7\ncores = 1\ngemm = "torch"'))
    host = toy_host
    records = []
    for _ in range(2):
        config = load_config(path, host.registry, out_dir=tmp_path / "out")
        records.append(json.loads(json.dumps(run_pipeline(config, host, quiet=True).record)))
    first, second = (r["calibration"] for r in records)
    assert first["mode"] == "auto" and first["gemm"] == {"source": "override",
                                                          "requested": "torch"}
    assert records[0]["gemm"]["source"] == "override"
    assert first["cores"]["source"] == "calibrated" and second["cores"]["source"] == "cache"
    assert first["cores"]["plans"] == second["cores"]["plans"]
    stage = next(s for s in records[0]["stages"] if "cores" in s)
    assert stage["cores"]["source"] == "measured" and stage["cores"]["cores"] == 1


def test_run_refuses_a_bad_mode_in_one_line(cli, tmp_path, toy_pipeline, toy_entry_point,
                                            monkeypatch):
    monkeypatch.setenv(calibrate.ENV_MODE, "sometimes")
    path = tmp_path / "p.toml"
    path.write_text(toy_pipeline)
    code, out, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code != 0
    assert 'GRAPHFLOW_CALIBRATE="sometimes": expected auto, force or off' in err
    assert "Traceback" not in err


def test_a_busy_measurement_is_not_kept_as_it_is(cache, monkeypatch, capsys):
    """Measured under load: one warning line, the fixed policy applied meanwhile, measured
    again once the machine is quiet, or after BUSY_REUSES uses whatever the load."""
    load = [100.0]
    monkeypatch.setattr(calibrate.os, "getloadavg", lambda: (load[0],) * 3)
    busy = calibrate.core_choices(1)
    err = capsys.readouterr().err
    assert err.count("graphflow: warning: calibration measured on a busy machine (load 100.0 "
                     "on") == 1 and "RuntimeWarning" not in err
    assert busy["busy"] and busy["plans"] == {} and set(busy["measured"]) == {
        "sampled", "walks", "full"}  # the measured splits are kept aside, not applied
    assert cores.plan("sampled", 1, measured=busy["plans"]).source == "policy"
    stored = json.loads(calibrate.cache_path().read_text())["cores-1"]
    assert stored["busy"] and stored["uses"] == 0
    for uses in range(1, calibrate.BUSY_REUSES):  # still busy: reused, counted, held back
        calibrate.forget()
        again = calibrate.core_choices(1)
        assert again["source"] == "cache" and again["plans"] == {}
        assert json.loads(calibrate.cache_path().read_text())["cores-1"]["uses"] == uses
    calibrate.forget()
    redone = calibrate.core_choices(1)  # used long enough: measured again, however busy
    assert redone["source"] == "calibrated" and redone["busy"]
    calibrate.forget()
    load[0] = 0.0  # quiet now: the busy entry is measured again at once, then kept
    quiet = calibrate.core_choices(1)
    assert quiet["source"] == "calibrated" and quiet["load_average"] == 0.0
    assert "busy" not in quiet and quiet["plans"]
    calibrate.forget()
    assert calibrate.core_choices(1)["source"] == "cache"


def test_a_busy_gemm_table_applies_the_fixed_rule(cache, monkeypatch):
    if not gemm.onednn_available():
        pytest.skip("torch without oneDNN: nothing to choose")
    monkeypatch.setattr(calibrate.os, "getloadavg", lambda: (100.0,) * 3)
    busy = calibrate.gemm_choices()
    assert busy["busy"] and set(busy["buckets"].values()) == {"torch"}
    assert set(busy["measured"]) == set(gemm.BUCKETS)


def test_the_gemm_table_is_kept_per_thread_count(cache, monkeypatch):
    """The stage's thread count is part of the key: a table measured with 2 threads is not
    applied to products run with 1, which get their own (measured at their first use)."""
    if not gemm.onednn_available():
        pytest.skip("torch without oneDNN: nothing to choose")
    asked: list[int] = []
    real = calibrate.measure_gemm

    def measure(reps: int = 4) -> dict:
        asked.append(torch.get_num_threads())
        return real(reps=1)

    monkeypatch.setattr(calibrate, "measure_gemm", measure)
    before = torch.get_num_threads()
    one = calibrate.gemm_choices(threads=1)
    two = calibrate.gemm_choices(threads=2)
    assert asked == [1, 2] and one["threads"] == 1 and two["threads"] == 2
    assert torch.get_num_threads() == before  # restored after measuring
    stored = json.loads(calibrate.cache_path().read_text())
    assert {"gemm-t1", "gemm-t2"} <= set(stored)
    # A run applied the 2-thread table; a product under 1 thread looks up the 1-thread one.
    table2 = dict.fromkeys(gemm.BUCKETS, "onednn")
    with gemm.applied("auto", table2, threads=2):
        torch.set_num_threads(2)
        assert gemm.backend_for(4096, 256, 256) == "onednn"
        torch.set_num_threads(1)
        try:
            assert gemm.backend_for(4096, 256, 256) == one["buckets"]["large-wide"]
        finally:
            torch.set_num_threads(before)
    assert asked == [1, 2]  # read from the cache, not measured again


def test_the_fixed_rule_prefers_no_backend_by_cpu():
    assert set(calibrate.fallback_gemm().values()) == {"torch"}


def test_a_cached_entry_of_the_wrong_shape_is_measured_again(cache):
    calibrate.core_choices(1)
    path = calibrate.cache_path()
    data = json.loads(path.read_text())
    data["cores-1"]["plans"]["sampled"]["threads"] = 0  # impossible: refused, not applied
    path.write_text(json.dumps(data))
    calibrate.forget()
    again = calibrate.core_choices(1)
    assert again["source"] == "calibrated" and again["plans"]["sampled"]["threads"] == 1
    assert json.loads(path.read_text())["cores-1"]["plans"] == again["plans"]


def test_bf16_is_measured_only_where_the_cpu_runs_it_natively(cache, monkeypatch):
    """precision = "auto": bfloat16 only where it runs natively and measured faster."""
    assert calibrate.bf16_choice(1, native=False) == {"bf16": False,
                                                      "source": "no native bfloat16"}
    calls = []

    def measure(budget: int) -> dict:
        calls.append(budget)
        return {"bf16": True, "ms": {"fp32": 10.0, "bf16": 5.0}, "budget": budget}

    monkeypatch.setattr(calibrate, "measure_precision", measure)
    found = calibrate.bf16_choice(1, native=True)
    assert found["bf16"] is True and found["source"] == "calibrated" and calls == [1]
    calibrate.forget()
    assert calibrate.bf16_choice(1, native=True)["source"] == "cache" and calls == [1]
    monkeypatch.setenv(calibrate.ENV_MODE, "off")
    assert calibrate.bf16_choice(1, native=True)["bf16"] is False


def test_measure_precision_times_both_arithmetics():
    found = calibrate.measure_precision(1, rounds=1)
    assert set(found["ms"]) == {"fp32", "bf16"} and all(v > 0 for v in found["ms"].values())
    assert found["bf16"] == (found["ms"]["bf16"] < calibrate.BF16_MARGIN * found["ms"]["fp32"])
