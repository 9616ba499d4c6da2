"""Where a bundle lives in a run folder, and its file names.

``OUT_DIR/model/`` for the single ``[train]`` stage, ``OUT_DIR/model-<section>/`` for each
``[[train]]`` entry (``model-train.1/``), next to ``checkpoint.pt``:

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
    """The bundle folder that ``path`` names: a bundle folder itself, or a run folder with
    one bundle (or ``stage``'s, when it has several).

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
    if len(stages) == 1:
        return bundle_dir(path, stages[0])
    if not stages:
        raise DataError(f"{path}: no model bundle (model/{BUNDLE_JSON}); train with "
                        f"graphflow run first, with a task that trains a [model] "
                        f"(node_classification, link_prediction, graph_classification...)")
    raise DataError(f"{path}: {len(stages)} model bundles ({', '.join(stages)}); choose one "
                    f"with --stage")


def _stages(path: Path) -> list[str]:
    found = []
    for child in sorted(path.iterdir()) if path.is_dir() else []:
        if (child / BUNDLE_JSON).is_file():
            if child.name == "model":
                found.append("train")
            elif child.name.startswith("model-"):
                found.append(child.name[len("model-"):])
    return found
