"""Checkpoints: the best model, and the full training state that ``--resume`` continues from.

Both files are written atomically (temporary sibling, then rename), so an interrupted run
leaves the previous complete file, never a truncated one.

* ``checkpoint.pt``: ``{"model": state_dict, "epoch": int, "monitor": "val_acc" | "val_loss",
  "score": float, "meta": {...}}``, the model with the best validation score so far.
* ``train_state.pt``: everything needed to continue bit-for-bit on the CPU: model and
  optimizer state, epoch, best-so-far, whether early stopping ended the run, and every
  random generator the loop draws from (torch's global CPU and CUDA generators and the
  loop's own, which also seeds the sampler).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from graphflow.errors import DataError
from graphflow.io.atomic import save_torch


def save(path: Path, obj: dict[str, Any]) -> Path:
    """Atomically ``torch.save`` ``obj`` to ``path`` (:func:`graphflow.io.atomic.save_torch`)."""
    save_torch(path, obj)
    return path


def load(path: Path) -> dict[str, Any]:
    """Read a file written by :func:`save` (tensors and plain containers only)."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise DataError(f"checkpoint not found: {path}") from None
    except Exception as exc:  # corrupt, truncated by hand, or not a torch file
        first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else ""
        raise DataError(f"cannot read checkpoint {path} (damaged or not a graphflow file: "
                        f"{type(exc).__name__} {first}); delete it to start over") from None


def cpu_copy(state: dict[str, Any]) -> dict[str, Any]:
    """A detached CPU copy of a ``state_dict`` (safe to keep while training goes on)."""
    return {k: v.detach().to("cpu", copy=True) if isinstance(v, torch.Tensor) else
            copy.deepcopy(v) for k, v in state.items()}


def rng_state(generator: torch.Generator) -> dict[str, Any]:
    """The state of every generator a training loop draws from."""
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "loop": generator.get_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any], generator: torch.Generator) -> None:
    """Restore what :func:`rng_state` captured."""
    torch.set_rng_state(state["torch"])
    generator.set_state(state["loop"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


@dataclass
class Best:
    """The best validation score seen so far, and the model that scored it."""

    score: float = float("-inf")
    epoch: int = 0
    model: dict[str, Any] | None = None  # CPU state_dict

    def update(self, score: float, epoch: int, model: torch.nn.Module) -> bool:
        """Record ``score``; return True (and keep a copy of the model) when it improves."""
        if score > self.score:
            self.score, self.epoch = score, epoch
            self.model = cpu_copy(model.state_dict())
            return True
        return False

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "epoch": self.epoch, "model": self.model}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Best:
        return cls(score=float(d["score"]), epoch=int(d["epoch"]), model=d["model"])


@dataclass
class TrainState:
    """What ``train_state.pt`` holds."""

    epoch: int
    model: dict[str, Any]
    optimizer: dict[str, Any]
    best: Best
    rng: dict[str, Any]
    scaler: dict[str, Any] | None = None
    stopped: bool = False  # early stopping ended training at ``epoch``
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "model": self.model, "optimizer": self.optimizer,
                "best": self.best.to_dict(), "rng": self.rng, "scaler": self.scaler,
                "stopped": self.stopped, "meta": self.meta}

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, path: Path) -> TrainState:
        try:
            return cls(epoch=int(d["epoch"]), model=d["model"], optimizer=d["optimizer"],
                       best=Best.from_dict(d["best"]), rng=d["rng"], scaler=d.get("scaler"),
                       stopped=bool(d.get("stopped", False)), meta=dict(d.get("meta", {})))
        except (KeyError, TypeError) as exc:
            raise DataError(f"{path} is not a graphflow training state (missing {exc}); "
                            f"delete it to start over") from None
