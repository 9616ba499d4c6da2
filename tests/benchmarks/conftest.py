"""A benchmark script's command line run in this process, for flags it refuses before any work."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def refused(monkeypatch, capsys) -> Callable[..., tuple[int, str]]:
    """``code, err = refused("portable.py", "--graphs", "-1")``: ``benchmarks/SCRIPT``'s
    ``main()`` with ``sys.argv`` as ``python benchmarks/SCRIPT ARGS...`` sets it, in this
    process: the exit status (argparse's usage error exits 2) and what it wrote on stderr.
    An exception other than ``SystemExit`` (a traceback) propagates and fails the test. Only
    for flags a script checks before doing anything (a fresh interpreter would import torch,
    DGL and graphflow again for a one-line answer)."""
    monkeypatch.syspath_prepend(str(ROOT))

    def run(script: str, *args: str) -> tuple[int, str]:
        module = importlib.import_module(f"benchmarks.{Path(script).stem}")
        monkeypatch.setattr(sys, "argv", [str(ROOT / "benchmarks" / script), *args])
        capsys.readouterr()
        try:
            returned = module.main()
            code = returned if isinstance(returned, int) else 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return code, capsys.readouterr().err

    return run
