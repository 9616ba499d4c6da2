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


def test_benchmarks_import_graphflow_before_torch():
    # The OpenMP default only applies when graphflow is imported before torch loads OpenMP;
    # benchmarks must measure the setting users get.
    import ast
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parent.parent / "benchmarks").glob("*.py")):
        order = []
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                order += [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                order.append(node.module.split(".")[0])
        assert "torch" in order and "graphflow" in order, path.name
        assert order.index("graphflow") < order.index("torch"), \
            f"{path.name} imports torch before graphflow"
