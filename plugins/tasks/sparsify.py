"""``[[train]] type = "sparsify"``: 2:4 semi-structured sparsity for a trained model."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch

from graphflow.pruning import two_four as sparsity
from graphflow.components import Task
from graphflow.context import RunContext
from graphflow.errors import ConfigError
from graphflow.options import option

TIMING_ROUNDS = 3


@runtime_checkable
class FineTunable(Protocol):
    """What the task that trained the model offers ``sparsify`` (``node_classification``
    does): its own training loop driven with a given model, and its inference."""

    def fit(self, ctx: RunContext, model: torch.nn.Module, *, epochs: int | None = None,
            lr: float | None = None) -> dict[str, float]: ...

    def inference(self, ctx: RunContext, model: torch.nn.Module
                  ) -> Callable[[], torch.Tensor]: ...


@dataclass
class SparsifyOptions:
    pattern: str = option("2:4", 'Sparsity pattern; only "2:4" (2 of every 4 consecutive input '
                                 "weights kept), the one NVIDIA's sparse tensor cores run.")
    include: list[str] = option(
        [], 'Glob patterns of the layer names to prune (e.g. "layers.*.mlp.*"); empty: every '
            "nn.Linear (and x @ W layer such as GCNConv).")
    exclude: list[str] = option([], "Glob patterns of layer names to leave dense.")
    min_features: int = option(
        32, "Leave layers with fewer input or output features than this dense (the sparse "
            "kernels need both widths >= 16 and gain nothing on small layers).")
    finetune_epochs: int = option(
        0, "Fine-tune the pruned model for this many epochs with the masks held fixed, "
           "through the training loop of the stage that trained it.")
    lr: float | None = option(None, "Fine-tuning learning rate (default: the training stage's).")
    backend: sparsity.Backend = option(
        "auto", 'Sparse kernels on CUDA sm80+: "torch" (torch.sparse.to_sparse_semi_structured)'
                ', "torchao" (torchao\'s sparsify_) or "auto" (torchao when installed).')
    dtype: sparsity.KernelDtype = option(
        "float16", "Dtype of the sparse matmul (inputs are cast to it, outputs back).")
    timing_repeats: int = option(
        10, "Timed inference calls per model and round (3 alternating rounds; the best "
            "round's median is reported).")

    def __post_init__(self) -> None:
        if self.pattern != sparsity.PATTERN:
            raise ValueError(f'pattern must be "2:4" (2 of every 4 consecutive input weights '
                             f'kept, the only pattern sparse tensor cores run), got '
                             f'"{self.pattern}"')
        if self.finetune_epochs < 0:
            raise ValueError(f"finetune_epochs must be >= 0, got {self.finetune_epochs}")
        if self.min_features < 0:
            raise ValueError(f"min_features must be >= 0, got {self.min_features}")
        if self.lr is not None and self.lr <= 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if self.timing_repeats < 1:
            raise ValueError(f"timing_repeats must be >= 1, got {self.timing_repeats}")


class Sparsify(Task):
    """Prune a trained model to 2:4 semi-structured sparsity, fine-tune, convert, measure.

    Place it after a training stage that produced a ``model`` (``[[train]] type =
    "node_classification"``). Steps:

    1. **Prune** the selected layers (``include`` / ``exclude`` / ``min_features``): in every
       group of 4 consecutive input weights the 2 of largest magnitude are kept. An input width
       that is not a multiple of 4 leaves its last columns dense (named in the record).
    2. **Fine-tune** (``finetune_epochs``) through the training stage's own loop and options,
       masks held fixed (pruned weights stay exactly zero through every optimizer step).
    3. **Convert** on CUDA sm80+ (A100, H100): each 2:4 ``nn.Linear`` runs on the
       semi-structured sparse kernels (cuSPARSELt through torch, or torchao), inputs made
       contiguous and cast to ``dtype``. A layer the backend rejects stays dense with a
       warning naming it and the reason; the run never fails for it.
    4. **Fall back** elsewhere: on the CPU and older GPUs the masked dense weights are the
       result, and the record says that no speed-up is expected.

    Results: ``run.json`` ``reports.<section>`` holds each layer (pruned fraction, converted or
    dense and why), accuracies dense / pruned / fine-tuned and inference times; flat metrics
    ``sparsity_*`` summarise them, and ``val_acc`` / ``test_acc`` become the final model's.
    The ``model`` artifact is the masked model on the CPU (``weight_mask`` buffers included;
    export it with ``[[export]] type = "pt", what = "model"``); ``logits`` and
    ``predictions`` are its outputs.
    """

    name = "sparsify"
    summary = "Prune a trained model to 2:4 sparsity, fine-tune, run on sparse kernels"
    Options = SparsifyOptions

    def run(self, ctx: RunContext) -> None:
        o = self.options
        section = ctx.section
        model, trainer = self._trained(ctx, section)
        try:
            chosen, skipped = sparsity.select_layers(model, o.include, o.exclude,
                                                     o.min_features)
        except ValueError as exc:
            raise ConfigError(f"[{section}] sparsify: {exc}; fix include") from None
        if not chosen:
            listing = "; ".join(f"{s.name} ({s.in_features}->{s.out_features}): {s.reason}"
                                for s in skipped) or "the model has none"
            raise ConfigError(f"[{section}] sparsify: no layer left to prune ({listing}); "
                              f"lower min_features or change include/exclude")
        dense_model = copy.deepcopy(model)
        accuracy = {"dense": _accuracy(trainer.fit(ctx, model, epochs=0))}
        pruned = sparsity.prune(chosen)
        ctx.info(f"[{section}] pruned {len(pruned)} layer(s) to 2:4: "
                 f"{', '.join(r.name for r in pruned)}")
        accuracy["pruned"] = _accuracy(trainer.fit(ctx, model, epochs=0))
        if o.finetune_epochs:
            accuracy["finetuned"] = _accuracy(
                trainer.fit(ctx, model, epochs=o.finetune_epochs, lr=o.lr))
        model = ctx.artifacts.model  # the fit left the masked model on the CPU
        converted, timing = self._convert_and_time(ctx, section, trainer, model, dense_model)
        self._record(ctx, section, pruned, skipped, converted, accuracy, timing, model)

    def _trained(self, ctx: RunContext, section: str) -> tuple[torch.nn.Module, FineTunable]:
        model = ctx.artifacts.model
        info = ctx.artifacts.model_info or {}
        if model is None:
            have = ", ".join(ctx.artifacts.available()) or "none"
            raise ConfigError(
                f'[{section}] sparsify needs a trained model from an earlier stage; put it '
                f'after one that trains it (e.g. [[train]] type = "node_classification"); the '
                f"stages before it produced: {have}")
        source = info.get("section")
        specs = [t.task for t in ctx.config.train if t.task.section == source]
        trainer = specs[0].build() if specs else None
        if not isinstance(trainer, FineTunable):
            kind = specs[0].type if specs else "an unknown stage"
            raise ConfigError(f"[{section}] sparsify: the model comes from {kind}, which does "
                              f"not offer fit() and inference() to fine-tune and evaluate a "
                              f"given model; train it with node_classification")
        return model, trainer

    def _convert_and_time(self, ctx: RunContext, section: str, trainer: FineTunable,
                          model: torch.nn.Module, dense_model: torch.nn.Module
                          ) -> tuple[list[sparsity.LayerReport], dict[str, Any]]:
        o = self.options
        device = ctx.device
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", sparsity.SparsityFallbackWarning)
            sparse_model, reports = sparsity.converted_copy(model, device, dtype=o.dtype,
                                                            backend=o.backend)
        for w in caught:
            if issubclass(w.category, sparsity.SparsityFallbackWarning):
                ctx.info(f"warning: [{section}] {w.message}")
        dense_model = dense_model.to(device).eval()
        models = {"dense": dense_model}
        names = [r.name for r in reports if r.status == "converted"]
        if names:  # the converted layers run dense in the kernel dtype: the fair baseline
            models[f"dense_{o.dtype}"] = sparsity.cast_copy(model, device, names, dtype=o.dtype)
        models["sparse"] = sparse_model
        calls = {key: trainer.inference(ctx, m) for key, m in models.items()}
        n = o.timing_repeats
        times: dict[str, list[float]] = {key: [] for key in calls}
        for _ in range(TIMING_ROUNDS):  # alternate, so that background load hits all alike
            for key, fn in calls.items():
                times[key].append(sparsity.time_call(fn, device, repeats=n))
        timing: dict[str, Any] = {"device": str(device), "repeats": n, "rounds": TIMING_ROUNDS}
        timing.update({f"{key}_ms": min(t) * 1e3 for key, t in times.items()})
        timing["speedup"] = timing["dense_ms"] / timing["sparse_ms"]
        if names:
            timing[f"speedup_vs_dense_{o.dtype}"] = \
                timing[f"dense_{o.dtype}_ms"] / timing["sparse_ms"]
            with torch.no_grad():
                masked = trainer.inference(ctx, model.to(device).eval())()
                out = calls["sparse"]()
            timing["converted_max_abs_diff"] = (out - masked).abs().max().item()
            timing["converted_prediction_agreement"] = \
                (out.argmax(-1) == masked.argmax(-1)).float().mean().item()
            model.cpu()
        why_not = sparsity.sparse_support(device)
        timing["note"] = why_not or (
            f"sparse_ms: the converted layers on the 2:4 kernels in {o.dtype}; dense_ms: the "
            f"model as trained (float32); dense_{o.dtype}_ms: the same layers dense in "
            f"{o.dtype}" if names else "no layer was converted")
        return reports, timing

    def _record(self, ctx: RunContext, section: str, pruned: list[sparsity.LayerReport],
                skipped: list[sparsity.LayerReport], converted: list[sparsity.LayerReport],
                accuracy: dict[str, dict[str, float]], timing: dict[str, Any],
                model: torch.nn.Module) -> None:
        conv = {r.name: r for r in converted}
        layers = []
        for r in pruned:
            row = r.as_dict()
            c = conv.get(r.name)
            row["status"] = c.status if c else "dense"
            row["reason"] = "; ".join(x for x in (r.reason, c.reason if c else "") if x)
            layers.append(row)
        layers += [s.as_dict() for s in skipped]
        overall = sparsity.pruned_fraction(model)
        n_converted = sum(r.status == "converted" for r in converted)
        ctx.reports[section] = {
            "pattern": self.options.pattern, "pruned_fraction": overall,
            "layers": layers, "accuracy": accuracy, "inference": timing,
            "speedup_expected": sparsity.sparse_support(ctx.device) is None,
            "converted_layers": n_converted,
        }
        figures: dict[str, float] = {"sparsity_pruned_fraction": overall,
                                     "sparsity_converted_layers": n_converted,
                                     "sparsity_dense_ms": timing["dense_ms"],
                                     "sparsity_sparse_ms": timing["sparse_ms"]}
        for stage, values in accuracy.items():
            figures.update({f"sparsity_{stage}_{k}": v for k, v in values.items()})
        ctx.log_metrics(**figures)
        tuned = accuracy.get("finetuned", accuracy["pruned"])
        ctx.info(f"[{section}] 2:4: {overall:.1%} of the selected weights pruned, "
                 f"{n_converted}/{len(converted)} layer(s) on sparse kernels; test_acc dense "
                 f"{accuracy['dense'].get('test_acc', float('nan')):.4f} -> "
                 f"{tuned.get('test_acc', float('nan')):.4f}; inference {timing['dense_ms']:.2f}"
                 f" ms dense, {timing['sparse_ms']:.2f} ms 2:4 on {ctx.device}"
                 + (f" ({timing['note']})" if sparsity.sparse_support(ctx.device) else ""))


def _accuracy(figures: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in figures.items() if k in ("val_acc", "test_acc")}
