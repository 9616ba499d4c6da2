"""What importing graphflow does (and does not do)."""

import os
import subprocess
import sys


def test_openmp_waiters_sleep_by_default():
    code = "import graphflow, os; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "PASSIVE"
    env["OMP_WAIT_POLICY"] = "ACTIVE"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "ACTIVE"


def test_import_is_cheap_and_builds_no_plugin_manager():
    code = "import graphflow, sys; print('torch' in sys.modules, 'pluggy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["False", "False"]
