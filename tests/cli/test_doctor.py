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
