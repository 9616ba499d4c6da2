"""Old name of the alternation helpers: they live in :mod:`benchmarks.records` (``race``,
``Race``, ``line``, ``is_alternating``, ``alternate``, ``orders``, ``spread``,
``ratio_spread``), the one module benchmarks import. This module only re-exports them so that
``from benchmarks import fair`` keeps working; new code imports ``benchmarks.records``."""

from benchmarks.records import (Race, alternate, is_alternating, line, orders, race,
                                ratio_spread, spread)

__all__ = ["Race", "alternate", "is_alternating", "line", "orders", "race", "ratio_spread",
           "spread"]
