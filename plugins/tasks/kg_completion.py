"""``[train] type = "kg_completion"``: train a knowledge-graph ``[model]`` and report the
filtered ranking figures (MRR, MR, Hits@1/3/10, overall and per relation) on the test split.

* A shallow embedding (transe, distmult, complex, rotate) on the triples of a ``triples``
  loader, in batches of triples (:mod:`graphflow.kge.train`); its bundle answers
  ``graphflow predict --queries`` (:mod:`graphflow.kge.bundle`).
* A typed encoder (``rgcn``, ``hetero``) with a DistMult decoder per relation (Schlichtkrull
  et al. 2018), full batch, on a typed graph with a ``link_split`` (``tables``, ``rdf``) or on
  the ``triples`` loader's graph (:mod:`graphflow.kge.encoder`).

Epochs run through the shared :class:`~graphflow.train.loop.EpochLoop` (a validation figure,
``monitor``, picks the best model; checkpoints, ``--resume``, SIGTERM) and steps through
:class:`~graphflow.train.step.Step` (precision, clipping). Options: docs/knowledge_graphs.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

import torch

from graphflow.capabilities import refuses
from graphflow.context import RunContext
from graphflow.errors import ConfigError
from graphflow.kge.encoder import EncoderScorer, check_decoders, typed_view
from graphflow.kge.evaluate import Filter, evaluate, filtered_ranks, ranking_figures
from graphflow.kge.models import KgeModel
from graphflow.kge.train import (Corrupt, KgeLoss, KgePass, Regularizer, Scoring,
                                 TrainSettings, make_optimizer)
from graphflow.kge.triples import KnowledgeGraph
from graphflow.linkpred.decoders import DistMultDecoder
from graphflow.linkpred.negatives import typed_samplers
from graphflow.linkpred.typed import TypedLinkFullBatch, TypedLinkModel
from graphflow.nn.typed import TypedAdjacency
from graphflow.options import option
from graphflow.train import typed_node
from graphflow.train.step import Step
from graphflow.train.task import (SupervisedOptions, SupervisedTask, check_at_least,
                                  check_positive)
from graphflow_plugins.models.kge import KgeModelComponent


@dataclass
class KgCompletionOptions(SupervisedOptions):
    epochs: int = option(100, "Training epochs (one pass over the training triples each).")
    lr: float = option(0.1, "Learning rate.")
    weight_decay: float = option(0.0, "Not offered (sparse gradients): use regularizer.")
    optimizer: Literal["adagrad", "sparse_adam", "adam"] = option(
        "adagrad", "adagrad or sparse_adam (a step updates only the rows it used) or adam "
                   "(dense).")
    monitor: Literal["val_mrr", "val_mr", "val_hits@1", "val_hits@3", "val_hits@10"] = option(
        "val_mrr", "The validation figure that picks the best model (filtered, both sides; "
                   "val_mr is minimised).")
    batch_size: int = option(1000, "Training triples per step.")
    scoring: Scoring = option("negatives", '"negatives" (sampled corruptions) or "1-n" (every '
                                           "entity a candidate, as ConvE).")
    negatives: int = option(64, "Corruptions per training triple.")
    shared_negatives: bool = option(
        False, "The batch shares one draw of negatives (scored by a matrix product).")
    corrupt: Corrupt = option("uniform", '"uniform" or "bernoulli" (Wang et al. 2014): which '
                                         "side a negative corrupts.")
    loss: KgeLoss = option("softplus", "margin, softplus, bce or ce.")
    margin: float = option(1.0, "The margin of loss = \"margin\".")
    adversarial_temperature: float = option(
        0.0, "Self-adversarial weighting of negatives (Sun et al. 2019) at this temperature "
             "α; 0 = uniform weights.")
    label_smoothing: float = option(0.0, "1-N with loss = \"bce\": label smoothing.")
    reciprocal: bool = option(False, "Add an inverse relation per relation and score heads "
                                     "as tails of the inverse (Lacroix et al. 2018).")
    regularizer: Regularizer = option("none", "none, l2 or n3 on the rows a batch used.")
    reg_weight: float = option(0.0, "The regularizer's weight.")
    eval_batch_size: int = option(256, "Triples ranked per batch in evaluation.")
    embedding_dim: int = option(0, "A typed encoder [model] (rgcn, hetero): the width of the "
                                   "entity vectors and of each relation's DistMult diagonal; "
                                   "0: the [model]'s hidden width.")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_at_least(self, 1, "batch_size", "negatives", "eval_batch_size")
        check_positive(self, "margin")
        check_at_least(self, 0, "adversarial_temperature", "reg_weight")
        if self.weight_decay:
            raise ValueError("weight_decay is not offered with sparse gradients; use "
                             'regularizer = "l2" or "n3" and reg_weight')
        if not 0 <= self.label_smoothing < 1:
            raise ValueError(f"label_smoothing must lie in [0, 1), got {self.label_smoothing}")
        if self.scoring == "1-n" and self.loss not in ("bce", "ce"):
            raise ValueError(f'scoring = "1-n" takes loss = "bce" or "ce", got {self.loss!r}')
        check_at_least(self, 0, "embedding_dim")
        if self.scoring == "1-n" and self.optimizer == "sparse_adam":
            raise ValueError('scoring = "1-n" updates every entity: use optimizer = "adagrad" '
                             'or "adam", not "sparse_adam"')


VALIDATION_FIGURES = ("val_mrr", "val_mr", "val_hits@1", "val_hits@3", "val_hits@10")
"""What each validation reports (filtered, both sides); ``monitor`` picks one."""

ENCODER_UNUSED = ("batch_size", "scoring", "shared_negatives", "corrupt", "margin",
                  "adversarial_temperature", "label_smoothing", "reciprocal", "regularizer",
                  "reg_weight")
"""Options of the shallow models that a typed encoder does not read (refused when set)."""

KG_REFUSALS = refuses(
    "sampled", "nproc", reason="knowledge-graph embeddings train on batches of triples in one "
                               "process", alternative="drop [sample] and --nproc") + refuses(
    "bundle", "predict", "serve",
    reason="an encoder + decoder knowledge-graph model has no bundle yet",
    alternative="read the test figures in metrics, or the pt model", when={"typed"}) + refuses(
    "onnx", "torchscript", "embeddings", "predictions",
    reason="a knowledge-graph model has no portable form or exports yet",
    alternative="answer queries with graphflow predict RUN_DIR --queries FILE or graphflow "
                "serve, or read the embeddings from the bundle's model.pt")


class KgCompletion(SupervisedTask):
    """Knowledge-graph completion with a shallow embedding model and filtered ranking."""

    name = "kg_completion"
    model_kind = "kg"
    summary = ("Knowledge-graph completion: a KGE [model] (transe, distmult, complex, rotate) "
               "or R-GCN + DistMult; filtered MRR per relation")
    Options = KgCompletionOptions
    refusals = KG_REFUSALS

    def knowledge_graph(self, ctx: RunContext) -> KnowledgeGraph:
        kg = ctx.data.meta.get("kg") if ctx.data is not None else None
        if not isinstance(kg, KnowledgeGraph):
            raise ConfigError(f'[{ctx.section}] kg_completion needs triples: [load] type = '
                              f'"triples"')
        return kg

    def build_model(self, ctx: RunContext) -> KgeModel | TypedLinkModel:
        component = self.require_model(ctx)
        if hasattr(component, "build_typed"):  # an encoder: R-GCN + DistMult
            return self._encoder_model(ctx, component)
        if not isinstance(component, KgeModelComponent):
            raise ConfigError(f'[{ctx.section}] kg_completion trains a knowledge-graph '
                              f'embedding [model]: transe, distmult, complex or rotate, or a '
                              f'typed encoder (rgcn, hetero), not {component.name!r}')
        kg = self.knowledge_graph(ctx)
        return component.build(kg.num_entities, kg.num_relations,
                               reciprocal=self.options.reciprocal)

    def save_bundle(self, ctx: RunContext, *, source: str | None = None) -> None:
        """The ``kg`` bundle (:mod:`graphflow.kge.bundle`): the embeddings, the entity and
        relation names and the known triples, what ``graphflow predict --queries`` reads."""
        from graphflow.kge.bundle import write_kg_bundle

        if isinstance(ctx.artifacts.model, TypedLinkModel):
            ctx.info(f"[{ctx.section}] no model bundle for an encoder + decoder model yet; "
                     f"the weights are in the run's checkpoint and the pt exporter")
        elif ctx.artifacts.model is not None:
            write_kg_bundle(ctx, self, ctx.artifacts.model, self.knowledge_graph(ctx))

    def fit(self, ctx: RunContext, model: KgeModel | TypedLinkModel) -> dict[str, float]:
        if isinstance(model, TypedLinkModel):
            return self._fit_encoder(ctx, model)
        o, kg = self.options, self.knowledge_graph(ctx)
        optimizer = make_optimizer(o.optimizer, model, o.lr)
        step = Step(model, optimizer, ctx.device, self.precision(ctx),
                    clip_grad_norm=o.clip_grad_norm)
        generator = self.generator(ctx)
        known = Filter.build(kg.known(), kg.num_entities, kg.num_relations)
        train_known = None
        if o.scoring == "1-n" and o.loss == "bce":
            train = model.triples_for_training(kg.splits["train"])
            train_known = Filter.build(train, kg.num_entities, model.num_relations)
        settings = TrainSettings(
            batch_size=o.batch_size, scoring=o.scoring, negatives=o.negatives,
            shared_negatives=o.shared_negatives, corrupt=o.corrupt, loss=o.loss,
            margin=o.margin, adversarial_temperature=o.adversarial_temperature,
            label_smoothing=o.label_smoothing, regularizer=o.regularizer,
            reg_weight=o.reg_weight)
        epoch_pass = KgePass(model, step, kg.splits["train"], settings, generator, train_known)

        self.resolve_monitor(ctx.section, VALIDATION_FIGURES)

        def validate() -> tuple[dict[str, float], float | None]:
            figures = evaluate(model, kg.splits["valid"], known, batch_size=o.eval_batch_size,
                               prefix="val_")
            figures = {k: figures[k] for k in VALIDATION_FIGURES}
            return figures, self.monitored(figures)

        meta = self.meta(ctx, entities=kg.num_entities, relations=kg.num_relations,
                         reciprocal=o.reciprocal)
        loop = self.epoch_loop(ctx, model, optimizer, meta, generator=generator)
        best = loop.run(epoch_pass.train_epoch, validate)
        figures = evaluate(model, kg.splits["test"], known, relations=kg.relations,
                           batch_size=o.eval_batch_size, prefix="test_")
        ctx.artifacts.model = model
        ctx.artifacts.model_info = {"task": self.name, "section": ctx.section,
                                    "model": ctx.model.name,
                                    "entities": kg.num_entities,
                                    "relations": kg.num_relations}
        shown = ["test_mrr", "test_mr", "test_hits@1", "test_hits@3", "test_hits@10"]
        return self.log_results(ctx, figures, best.epoch, shown=shown)

    # -- an encoder + decoder (graphflow.kge.encoder) ----------------------------------------

    def _encoder_model(self, ctx: RunContext, component: Any) -> TypedLinkModel:
        """The typed ``[model]`` (every node type to ``embedding_dim``) under a DistMult
        decoder per relation; refuses the shallow models' options it does not read."""
        o = self.options
        defaults = {f.name: f.default for f in dataclasses.fields(o)}
        unused = [k for k in ENCODER_UNUSED if getattr(o, k) != defaults[k]]
        if unused:
            raise ConfigError(f"[{ctx.section}] {', '.join(unused)}: options of the shallow "
                              f"models, which an encoder [model] ({component.name}) does not "
                              f"read (it trains full batch, negatives tail-side); remove them")
        if o.loss not in ("softplus", "bce"):
            raise ConfigError(f'[{ctx.section}] loss = "{o.loss}": an encoder [model] trains '
                              f'with binary cross-entropy (loss = "bce" or "softplus", the '
                              f'same)')
        if o.optimizer == "sparse_adam":
            raise ConfigError(f'[{ctx.section}] optimizer = "sparse_adam" takes sparse '
                              f'gradients only; an encoder has dense weights: use "adam" or '
                              f'"adagrad"')
        data = ctx.graph()
        view = typed_view(data)
        dim = o.embedding_dim or int(getattr(component.options, "hidden", 0) or 64)
        feats = typed_node.typed_features(data)
        encoder = typed_node.build_typed_model(component, data, feats, dim, ctx.host.registry)
        model = TypedLinkModel(encoder, [DistMultDecoder(dim) for _ in view.relations],
                               view.relations)
        check_decoders(model)
        return model

    def _fit_encoder(self, ctx: RunContext, model: TypedLinkModel) -> dict[str, float]:
        """Full-batch training (:class:`TypedLinkFullBatch`), filtered ranking of every
        entity of the right type, figures overall and per relation."""
        o, data = self.options, ctx.graph()
        g = data.graph
        view = typed_view(data)
        kg = view.kg
        feats = typed_node.typed_features(data)
        model = model.to(ctx.device)
        optimizer = make_optimizer(o.optimizer, model, o.lr)
        step = Step(model, optimizer, ctx.device, self.precision(ctx),
                    clip_grad_norm=o.clip_grad_norm)
        generator = self.generator(ctx)
        positives = {r: torch.stack(g.edges(etype=r)).long() for r in view.relations}
        runner = TypedLinkFullBatch(model, step, "bce", TypedAdjacency.from_graph(g),
                                    typed_node.model_inputs(data, feats), positives,
                                    typed_samplers(g, view.relations, "uniform"), o.negatives,
                                    generator)
        known = Filter.build(kg.known(), kg.num_entities, kg.num_relations)
        ntypes = list(g.ntypes)

        def ranked(split: str, prefix: str, relations: Any = None) -> dict[str, float]:
            h = {t: v.float().cpu() for t, v in runner.embeddings().items()}
            scorer = EncoderScorer(model, h, view, ntypes)
            tr, hr = filtered_ranks(kg.splits[split], scorer.score_t, scorer.score_h, known,
                                    batch_size=o.eval_batch_size)
            return ranking_figures(kg.splits[split], tr, hr, relations, prefix)

        self.resolve_monitor(ctx.section, VALIDATION_FIGURES)

        def validate() -> tuple[dict[str, float], float | None]:
            figures = ranked("valid", "val_")
            figures = {k: figures[k] for k in VALIDATION_FIGURES}
            return figures, self.monitored(figures)

        meta = self.meta(ctx, entities=kg.num_entities, relations=kg.num_relations,
                         embedding_dim=int(model.decoders[0].weight.shape[0]),
                         encoder=True)
        loop = self.epoch_loop(ctx, model, optimizer, meta, generator=generator)
        best = loop.run(runner.train_epoch, validate)
        figures = ranked("test", "test_", kg.relations)
        ctx.artifacts.model = model.cpu().eval()
        ctx.artifacts.model_info = {**meta, "section": ctx.section}
        shown = ["test_mrr", "test_mr", "test_hits@1", "test_hits@3", "test_hits@10"]
        return self.log_results(ctx, figures, best.epoch, shown=shown)
