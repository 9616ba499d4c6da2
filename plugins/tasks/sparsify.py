"""``[[train]] type = "sparsify"``: 2:4 semi-structured sparsity for a trained model."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
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
    """What the task that trained the model offers ``sparsify`` (every supervised task:
    ``node_classification``, ``link_prediction``, ``graph_classification``,
    ``graph_regression``): its own training loop driven with a given model (``epochs = 0``
    only evaluates), and its inference (node logits, node embeddings of a link model, graph
    scores)."""

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

    Place it after a supervised training stage that produced a ``model``
    (``node_classification``, ``link_prediction``, ``graph_classification``,
    ``graph_regression``); a pipeline that puts it after anything else is refused when it is
    read. Steps:

    1. **Prune** the selected layers (``include`` / ``exclude`` / ``min_features``): in every
       group of 4 consecutive input weights the 2 of largest magnitude are kept. An input width
       that is not a multiple of 4 leaves its last columns dense (named in the record).
    2. **Fine-tune** (``finetune_epochs``) through the training stage's own loop and options,
       masks held fixed (pruned weights stay exactly zero through every optimizer step,
       whichever task's loop takes them).
    3. **Convert** on CUDA sm80+ (A100, H100): each 2:4 ``nn.Linear`` runs on the
       semi-structured sparse kernels (cuSPARSELt through torch, or torchao), inputs made
       contiguous and cast to ``dtype``. A layer the backend rejects stays dense with a
       warning naming it and the reason; the run never fails for it.
    4. **Fall back** elsewhere: on the CPU and older GPUs the masked dense weights are the
       result, and the record says that no speed-up is expected.

    Results: ``run.json`` ``reports.<section>`` holds each layer (pruned fraction, converted or
    dense and why), the validation and test figures dense / pruned / fine-tuned (the training
    task's: ``val_acc``, ``test_auc``, ``test_mae``...) and inference times; flat metrics
    ``sparsity_*`` summarise them, and the task's figures become the final model's. The
    ``model`` artifact is the masked model on the CPU (``weight_mask`` buffers included); the
    stage writes its own model bundle (``OUT_DIR/model-<section>/``), which ``graphflow
    predict`` and ``graphflow serve`` use by default, being the last stage's; the other
    artifacts (``logits``, ``predictions``, ``embeddings``, ``links``) are its outputs.
    """

    name = "sparsify"
    summary = "Prune a trained model to 2:4 sparsity, fine-tune, run on sparse kernels"
    level = "any"  # the model's task decides: node, link or graph level
    Options = SparsifyOptions

    @classmethod
    def check_stages(cls, stage: Any, before: Sequence[Any], source: str) -> None:
        """Refuse, when the pipeline is read, a ``sparsify`` stage with no supervised
        training stage before it, or after one whose model it cannot fine-tune.

        :param stage: this stage's ``TrainSpec``; ``before``: the stages before it.
        """
        where = f"{source}: [{stage.task.section}] sparsify"
        trainers = [t for t in before if t.task.type != cls.name]
        if not trainers:
            raise ConfigError(
                f'{where} needs a trained model from an earlier stage; put it after one that '
                f'trains it (e.g. [[train]] type = "node_classification"); the stages before '
                f"it: {', '.join(t.task.type for t in before) or 'none'}")
        last = trainers[-1]
        task_cls = last.task.info.cls
        if not all(callable(getattr(task_cls, m, None)) for m in ("fit", "inference")) \
                or getattr(task_cls.fit, "__isabstractmethod__", False) \
                or not getattr(task_cls, "requires_model", False):
            raise ConfigError(
                f"{where}: the stage before it, [{last.task.section}] {last.task.type}, trains "
                f"no [model] that sparsify can fine-tune (it needs the task's fit() and "
                f"inference()); put sparsify after a supervised stage (node_classification, "
                f"link_prediction, graph_classification, graph_regression)")
        if last.task.type == "link_prediction" and last.model is not None and \
                getattr(last.model.info.cls, "typed", False):
            raise ConfigError(
                f"{where}: [{last.task.section}] link_prediction trains a typed "
                f"{last.model.type} model, whose link scores sparsify cannot time yet; prune "
                f"a link model of a graph with one node type, or a typed node classifier")
        if getattr(last.task.options, "folds", 0) or \
                getattr(last.task.options, "fold_file", None) is not None:
            raise ConfigError(
                f"{where}: [{last.task.section}] {last.task.type} cross-validates (folds), so "
                f"its model is only the last fold's; train one split (folds = 0) before "
                f"sparsify")

    def run(self, ctx: RunContext) -> None:
        o = self.options
        section = ctx.section
        model, trainer, source = self._trained(ctx, section)
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
        accuracy = {"dense": _figures(trainer.fit(ctx, model, epochs=0))}
        pruned = sparsity.prune(chosen)
        ctx.info(f"[{section}] pruned {len(pruned)} layer(s) to 2:4: "
                 f"{', '.join(r.name for r in pruned)}")
        with sparsity.masks_held(model):  # whichever task's loop, pruned weights stay zero
            accuracy["pruned"] = _figures(trainer.fit(ctx, model, epochs=0))
            if o.finetune_epochs:
                accuracy["finetuned"] = _figures(
                    trainer.fit(ctx, model, epochs=o.finetune_epochs, lr=o.lr))
        model = ctx.artifacts.model  # the fit left the masked model on the CPU
        converted, timing = self._convert_and_time(ctx, section, trainer, model, dense_model)
        self._record(ctx, section, pruned, skipped, converted, accuracy, timing, model)
        self._save_bundle(ctx, trainer, source)

    def _save_bundle(self, ctx: RunContext, trainer: FineTunable, source: str | None) -> None:
        """The pruned model's bundle (``OUT_DIR/model-<section>/``), through the training
        task's own bundle writer, recording the training stage's ``[train]`` and ``[model]``
        (what rebuilds the model) and this stage's masks."""
        save = getattr(trainer, "save_bundle", None)
        if callable(save):
            save(ctx, source=source)

    def _trained(self, ctx: RunContext, section: str
                 ) -> tuple[torch.nn.Module, FineTunable, str | None]:
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
                              f"given model; train it with a supervised task "
                              f"(node_classification, link_prediction, graph_classification)")
        return model, trainer, source

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
            if out.dim() == 2 and out.shape[-1] > 1:  # scores per class
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
        main = next((k for k in ("test_acc", "test_auc", "test_mae", "test_f1_micro")
                     if k in accuracy["dense"]),
                    next((k for k in accuracy["dense"] if k.startswith("test_")), "test_acc"))
        ctx.info(f"[{section}] 2:4: {overall:.1%} of the selected weights pruned, "
                 f"{n_converted}/{len(converted)} layer(s) on sparse kernels; {main} dense "
                 f"{accuracy['dense'].get(main, float('nan')):.4f} -> "
                 f"{tuned.get(main, float('nan')):.4f}; inference {timing['dense_ms']:.2f}"
                 f" ms dense, {timing['sparse_ms']:.2f} ms 2:4 on {ctx.device}"
                 + (f" ({timing['note']})" if sparsity.sparse_support(ctx.device) else ""))


def _figures(figures: dict[str, float]) -> dict[str, float]:
    """The validation and test figures of a fit (whatever the task reports)."""
    return {k: v for k, v in figures.items() if k.startswith(("val_", "test_"))}
