import json

import torch


def test_doctor_checks_spmm_on_each_device(cli):
    code, out, err = cli("doctor", "--json")
    report = json.loads(out)
    assert code == 0, report
    assert report["versions"]["torch"] and report["versions"]["dgl"] == "2.1.0"
    assert report["cuda"]["available"] is torch.cuda.is_available()
    devices = [c["device"] for c in report["spmm"]]
    assert devices[0] == "cpu" and len(devices) == 1 + torch.cuda.device_count()
    assert all(c["ok"] for c in report["spmm"])


def test_doctor_text(cli):
    code, out, _ = cli("doctor")
    assert code == 0
    assert "spmm: pass on cpu" in out
    assert "graphbolt:" in out


def test_doctor_reports_semi_structured_sparsity_per_device(cli):
    code, out, _ = cli("doctor", "--json")
    checks = json.loads(out)["semi_structured"]
    assert [c["device"] for c in checks][0] == "cpu" and code == 0
    assert checks[0]["supported"] is False and "no speed-up is expected" in checks[0]["reason"]
    for check in checks[1:]:  # CUDA: sm80+ runs the matmul, older GPUs say why not
        sm80 = torch.cuda.get_device_capability(check["device"]) >= (8, 0)
        assert check["supported"] is sm80 or "reason" in check, check
        if check["supported"]:
            assert check["relative_error"] < 1e-2
    _, text, _ = cli("doctor")
    assert "2:4: not supported on cpu (no semi-structured sparse kernels on cpu" in text


def test_doctor_shows_the_cpu_and_the_choices_a_run_would_use(cli):
    """Calibration is off in the test session (tests/conftest.py): the fixed rules, named."""
    code, out, _ = cli("doctor", "--json")
    report = json.loads(out)
    assert code == 0
    assert report["cpu"]["cores"] >= 1 and "isa" in report["cpu"]
    assert report["libraries"]["torch"] == torch.__version__
    assert report["caps"]["torch_threads"] == torch.get_num_threads()
    calib = report["calibration"]
    assert calib["mode"] == "off" and calib["gemm"]["source"] == "off"
    assert calib["cores"] == {"plans": {}, "source": "off"}
    _, text, _ = cli("doctor")
    assert "cpu: " in text and "family" in text
    assert "gemm: large-wide: " in text and "[off]" in text
    assert "cores: the fixed policy (graphflow.runtime.cores) [off]" in text


def test_doctor_calibrate_measures_and_caches(cli, tmp_path, monkeypatch):
    from graphflow.runtime import calibrate

    monkeypatch.setenv(calibrate.ENV_DIR, str(tmp_path))
    # a quiet machine: the suite's own load would make the measurement "busy" (held back)
    monkeypatch.setattr(calibrate.os, "getloadavg", lambda: (0.0,) * 3)
    calibrate.forget()
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # a budget of one core: the shortest measurement
    try:
        code, out, _ = cli("doctor", "--calibrate")
        assert code == 0
        assert "calibrate: mode force, cache " + str(tmp_path) in out
        assert "[calibrated]" in out and "cores: sampled: " in out
        assert list(tmp_path.glob("calibration-*.json"))
        monkeypatch.setenv(calibrate.ENV_MODE, "auto")
        calibrate.forget()
        code, out, _ = cli("doctor")
        assert "[cache]" in out and "[calibrated]" not in out
    finally:
        torch.set_num_threads(before)
        calibrate.forget()
