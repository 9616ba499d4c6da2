"""Model bundles: a trained model and what rebuilds its exact input, saved with every run.

Every supervised training stage writes ``OUT_DIR/model/`` (:mod:`graphflow.bundle.layout`);
:func:`load_bundle` checks and rebuilds it as a :class:`Bundle` (``.model`` in eval mode,
``.config``, ``.model_info``, ``.fitted``, ``.ids``, ``.versions``, ``.inputs(data)``).
``graphflow predict`` and ``graphflow serve`` are built on it (docs/inference.md).
"""

from __future__ import annotations

from graphflow.bundle.layout import BUNDLE_JSON, FORMAT, bundle_dir, find_bundle
from graphflow.bundle.load import Bundle, load_bundle, read_meta

__all__ = ["BUNDLE_JSON", "FORMAT", "Bundle", "bundle_dir", "find_bundle", "load_bundle",
           "read_meta"]
