"""What importing graphflow does (and does not do)."""

import os
import subprocess
import sys


def test_import_leaves_openmp_settings_alone():
    # graphflow used to default OMP_WAIT_POLICY to PASSIVE; on an idle machine that made Cora
    # GCN epochs and skip-gram training 1.3-1.8x slower (docs/sparse.md), so the wait policy
    # is the user's (torch's default unless set).
    code = "import graphflow, os; print(os.environ.get('OMP_WAIT_POLICY', 'unset'))"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "unset"


def test_import_is_cheap_and_builds_no_plugin_manager():
    code = "import graphflow, sys; print('torch' in sys.modules, 'pluggy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["False", "False"]
