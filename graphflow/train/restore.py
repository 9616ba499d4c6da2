"""Start a task from a model exported by ``[[export]] type = "pt"``, ``what = "model"``.

The file holds the model's ``state_dict`` (2:4 masks included, as ``weight_mask`` buffers) and
``model_info``: the task, ``[model]`` type and options, features and widths it was trained
with. A model is rebuilt by the task from its own ``[model]`` section, so both must agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from graphflow.errors import ConfigError, DataError
from graphflow.pruning.two_four import attach_masks
from graphflow.train import checkpoint as ckpt

MATCHED = ("model", "model_options", "features", "in_dim", "classes")
"""What the pipeline's model must share with the saved one (the task and monitor may differ)."""


def model_payload(model: nn.Module, info: dict[str, Any] | None) -> dict[str, Any]:
    """What the ``pt`` exporter saves for ``what = "model"`` (``weights_only``-loadable)."""
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    masks = sorted(k[: -len(".weight_mask")] for k in state if k.endswith(".weight_mask"))
    return {"model": state, "model_info": dict(info or {}), "masks": masks}


def restore_model(model: nn.Module, path: Path, expected: dict[str, Any]) -> list[str]:
    """Load the exported model at ``path`` into ``model`` (freshly built); return the names of
    its 2:4-masked layers.

    :raises DataError: the file is missing, unreadable, or not a model export.
    :raises ConfigError: it was trained with another ``[model]``, features or classes.
    """
    if not Path(path).is_file():
        raise DataError(f'restore_model: {path} not found; write one with [[export]] type = '
                        f'"pt", what = "model"')
    payload = ckpt.load(path)
    if not isinstance(payload, dict) or payload.get("what") != "model" \
            or not isinstance(payload.get("model"), dict):
        what = payload.get("what") if isinstance(payload, dict) else type(payload).__name__
        raise DataError(f'restore_model: {path} holds {what!r}, not a model; export one with '
                        f'[[export]] type = "pt", what = "model"')
    saved = payload.get("model_info") or {}
    changed = [f"{k} (saved {saved.get(k)!r}, now {expected.get(k)!r})" for k in MATCHED
               if k in saved and saved.get(k) != expected.get(k)]
    if changed:
        raise ConfigError(f"restore_model: {path} was trained with another setup: "
                          f"{'; '.join(changed)}; make the pipeline's [model] and features "
                          f"match it")
    state: dict[str, torch.Tensor] = payload["model"]
    masks = attach_masks(model, state)
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0][:200]
        raise DataError(f"restore_model: {path} does not fit the pipeline's model: "
                        f"{first}") from None
    return masks
