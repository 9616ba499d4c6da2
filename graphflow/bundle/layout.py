"""Where a bundle lives in a run folder, and its file names.

``OUT_DIR/model/`` for the single ``[train]`` stage, ``OUT_DIR/model-<section>/`` for each
``[[train]]`` entry (``model-train.1/``), next to ``checkpoint.pt``. Every stage that
produces a model writes one (a ``sparsify`` stage: the pruned model); ``graphflow predict``
and ``graphflow serve`` take the last stage's unless ``--stage`` names another
(:func:`find_bundle`):

================================  =========================================================
``bundle.json``                   format, kind, config, inputs, fitted transform state,
                                  labels, versions, the weights' checksum
``model.pt``                      ``torch.save`` of ``{"what": "model", "model": state_dict,
                                  "model_info": ..., "masks": [...]}``
                                  (``torch.load(weights_only=True)``; also a valid
                                  ``restore_model`` file)
``ids.parquet``                   the training graph's original node ids (column ``id``)
``held_out_nodes.parquet``        the nodes ``hold_out_nodes`` removed (column ``id``),
                                  when the pipeline had that transform
================================  =========================================================
"""

from __future__ import annotations

import json
from pathlib import Path

from graphflow.errors import DataError

FORMAT = 1
"""The bundle layout version this graphflow writes and reads."""
BUNDLE_JSON = "bundle.json"
WEIGHTS = "model.pt"
IDS = "ids.parquet"
HELD_OUT = "held_out_nodes.parquet"


def bundle_dir(out_dir: Path, section: str) -> Path:
    """The bundle folder of training stage ``section`` in ``out_dir``."""
    return out_dir / ("model" if section == "train" else f"model-{section}")


def find_bundle(path: Path, stage: str | None = None) -> Path:
    """The bundle folder that ``path`` names: a bundle folder itself, or in a run folder
    ``stage``'s bundle, by default the last stage's (a ``sparsify`` stage after ``train.0``:
    the pruned model).

    The last stage is the last bundle the run's ``run.json`` lists among its outputs (the
    order the stages wrote them); without a readable ``run.json``, the last in pipeline
    order (``train.0``, ``train.1``, ...).

    :raises DataError: no bundle there (one line, with the fix).
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such run folder; give the out_dir of a training run "
                        f"(graphflow run writes its model bundle to OUT_DIR/model/)")
    if (path / BUNDLE_JSON).is_file():
        return path
    if stage is not None:
        found = bundle_dir(path, stage)
        if (found / BUNDLE_JSON).is_file():
            return found
        raise DataError(f"{path}: no model bundle of stage {stage!r} ({found.name}/"
                        f"{BUNDLE_JSON} is missing); stages with one: "
                        f"{', '.join(_stages(path)) or 'none'}")
    stages = _stages(path)
    if not stages:
        raise DataError(f"{path}: no model bundle (model/{BUNDLE_JSON}); train with "
                        f"graphflow run first, with a task that trains a [model] "
                        f"(node_classification, link_prediction, graph_classification...)")
    return bundle_dir(path, last_stage(path, stages))


def last_stage(path: Path, found: list[str] | None = None) -> str:
    """The stage whose bundle ``predict`` and ``serve`` use by default (see
    :func:`find_bundle`); ``found``: the stages with a bundle in ``path``, in pipeline
    order."""
    found = _stages(path) if found is None else found
    written = []
    try:
        record = json.loads((path / "run.json").read_text(encoding="utf-8"))
        for out in record.get("outputs") or []:
            if out.get("what") == "model bundle":
                written.append(_section_of(Path(str(out.get("path", ""))).name))
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    written = [s for s in written if s in found]
    return written[-1] if written else found[-1]


def _section_of(folder: str) -> str:
    return "train" if folder == "model" else folder[len("model-"):]


def _order(section: str) -> tuple[int, str]:
    _, _, number = section.partition(".")
    return (int(number), section) if number.isdigit() else (-1, section)


def _stages(path: Path) -> list[str]:
    """The stages with a bundle in run folder ``path``, in pipeline order."""
    found = []
    for child in path.iterdir() if path.is_dir() else []:
        if (child / BUNDLE_JSON).is_file() and (child.name == "model"
                                                or child.name.startswith("model-")):
            found.append(_section_of(child.name))
    return sorted(found, key=_order)
