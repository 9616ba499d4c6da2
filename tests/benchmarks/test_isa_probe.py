"""benchmarks/isa_probe.py: an emulated AVX2 CPU caps MKL, oneDNN and ATen alike, and the probe
shows it (the instruction set each library says it runs)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.matrix import AVX2, products_cell  # noqa: E402


def probe(caps: dict[str, str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in AVX2} | caps
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "isa_probe.py"),
                           "--threads", "1", "--reps", "2"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_avx2_row_caps_every_library_on_the_path():
    assert set(AVX2) == {"ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS"}
    native = probe({})
    if "avx512" not in native["isa"]["aten"].lower():
        pytest.skip("not an AVX-512 CPU: an AVX2 cap changes nothing here")
    capped = probe(AVX2)
    assert capped["caps"] == AVX2
    assert "AVX2" in capped["isa"]["mkl"] and "512" not in capped["isa"]["mkl"]
    assert capped["isa"]["onednn"] == "Intel AVX2" and capped["isa"]["aten"] == "AVX2"
    assert "512" in native["isa"]["mkl"]  # uncapped, MKL runs its AVX-512 kernels
    assert all(v > 0 for v in capped["product_ms"].values())
    cell = products_cell(capped)
    assert "MKL" in cell and "(AVX2)" in cell and "ATen AVX2" in cell
