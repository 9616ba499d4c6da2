"""``[model] type = "transe" | "distmult" | "complex" | "rotate"``: shallow knowledge-graph
embeddings (:mod:`graphflow.kge.models`) for ``[train] type = "kg_completion"``."""

from __future__ import annotations

from dataclasses import dataclass

from graphflow.components import Model
from graphflow.errors import ConfigError
from graphflow.kge.models import MODELS, KgeModel
from graphflow.options import option


@dataclass
class KgeOptions:
    dim: int = option(200, "Embedding width d (ComplEx and RotatE: d complex numbers, 2d reals).")
    gamma: float = option(12.0, "TransE and RotatE: the margin γ of the score γ - distance "
                                "(and of the initialisation range (γ + 2) / d).")

    def __post_init__(self) -> None:
        if self.dim < 1:
            raise ValueError(f"dim must be >= 1, got {self.dim}")


class KgeModelComponent(Model):
    """A shallow embedding model; ``build(num_entities, num_relations, reciprocal=...)``."""

    Options = KgeOptions
    key = ""

    def build(self, in_dim: int, out_dim: int, *, reciprocal: bool = False) -> KgeModel:
        """``in_dim``: the entities, ``out_dim``: the relations (before reciprocals)."""
        if in_dim < 1 or out_dim < 1:
            raise ConfigError(f"[model] {self.name} needs entities and relations (a triples "
                              f"graph), got {in_dim} and {out_dim}")
        return MODELS[self.key](in_dim, out_dim, self.options.dim, reciprocal=reciprocal,
                                gamma=self.options.gamma)


class TransEModel(KgeModelComponent):
    """TransE: translations, scored by the negative L1 distance from h + r to t."""

    name, key = "transe", "transe"
    summary = "TransE (Bordes et al. 2013): γ - ||h + r - t||_1, for kg_completion"


class DistMultModel(KgeModelComponent):
    """DistMult: a diagonal bilinear score (symmetric relations)."""

    name, key = "distmult", "distmult"
    summary = "DistMult (Yang et al. 2015): <h, r, t>, for kg_completion"


class ComplExModel(KgeModelComponent):
    """ComplEx: DistMult in complex space (asymmetric relations)."""

    name, key = "complex", "complex"
    summary = "ComplEx (Trouillon et al. 2016): Re(<h, r, conj t>), for kg_completion"


class RotatEModel(KgeModelComponent):
    """RotatE: relations as rotations in complex space."""

    name, key = "rotate", "rotate"
    summary = "RotatE (Sun et al. 2019): γ - Σ|h∘r - t|, |r| = 1, for kg_completion"


KGE_MODELS = (TransEModel, DistMultModel, ComplExModel, RotatEModel)
