"""The fuzz property over every loader and over pipeline TOML / ``--set`` (see graphflow.fuzz).

Bounded and derandomised for CI (``graphflow-ci`` profile: the same examples every run);
``benchmarks/fuzz.py`` runs the same strategies and checker with a far larger budget.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from fuzzing import STRATEGIES, run_case

EXAMPLES = {"planetoid": 8, "config.toml": 50}  # slower cases: Cora's files, training runs
DEFAULT_EXAMPLES = 60
TIME_BOUND = 30.0  # seconds per example; a hang fails the property

settings.register_profile("graphflow-ci", derandomize=True, deadline=None, database=None,
                          print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                 HealthCheck.filter_too_much,
                                                 HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("component", sorted(STRATEGIES))
def test_bad_input_gets_one_clear_line_or_a_complete_run(component, tmp_path):
    @settings(settings.get_profile("graphflow-ci"),
              max_examples=EXAMPLES.get(component, DEFAULT_EXAMPLES))
    @given(case=STRATEGIES[component]())
    def check(case):
        folder = Path(tempfile.mkdtemp(dir=tmp_path))
        try:
            outcome = run_case(case, folder, bound=TIME_BOUND)
            assert outcome.ok, outcome.report()
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    check()
