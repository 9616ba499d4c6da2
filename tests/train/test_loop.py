"""EpochLoop options: values no loop can run with are refused whoever builds them."""

from __future__ import annotations

import pytest

from graphflow.train.loop import LoopOptions


@pytest.mark.parametrize("kwargs", [{"epochs": -1}, {"epochs": 3, "eval_every": 0},
                                    {"epochs": 3, "patience": -2}])
def test_impossible_loop_options_are_refused(kwargs):
    with pytest.raises(ValueError, match="LoopOptions: need epochs >= 0, eval_every >= 1, "
                                         "patience >= 0"):
        LoopOptions(**kwargs)
    assert LoopOptions(epochs=0).eval_every == 1  # zero epochs is a valid (empty) run
