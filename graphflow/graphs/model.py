r"""A graph-level model: any ``[model]`` as the node encoder, a readout, a linear head.

The ``[model]`` keeps the model-input contract of node tasks: its module maps
``(adj, x)`` to node vectors (n, D). :class:`GraphModel` pools them per graph and scores the
graph:

* ``layers = "last"``: :math:`s_b = \mathrm{drop}(W \,\mathrm{readout}(h^{(L)})_b + c)`;
* ``layers = "all"`` (the GIN paper, Xu et al. 2019, eq. 4.2): every layer's output, the input
  features included, is read out and scored by its own linear map, and the scores add up,
  :math:`s_b = \sum_{l=0}^{L} \mathrm{drop}(W_l \,\mathrm{readout}(h^{(l)})_b + c_l)`.

Where the dropout sits (``dropout_on``):

* ``"scores"`` (default): on each layer's C-wide scores, after its linear map, as the GIN
  paper's code (``F.dropout(linears_prediction[l](pooled_h))``) and DGL's GIN example
  (``drop(linear_prediction[i](pooled_h))``) do;
* ``"features"``: on the read-out vectors before the linear maps,
  :math:`s_b = \sum_l W_l\,\mathrm{drop}(r_l) + c_l` (D-wide vectors, one draw over
  their concatenation): a different regulariser, graphflow's placement before the recipe's.

Either way the product is one: ``"features"`` multiplies the concatenated read-out vectors by
``[W_0 ... W_L]``; ``"scores"`` in training multiplies them by the block matrix whose block
``l`` is ``W_l`` (zero elsewhere), giving every layer's scores (B, L + 1, C) in one product,
drops them in one draw and sums over the layers. In eval mode (no dropout) both are the
plain product ``[W_0 ... W_L] [r_0 ... r_L] + sum_l c_l``.

Per-layer outputs come from the module's optional ``layer_outputs(adj, x) -> [x, h_1, ...,
h_L]`` (every :class:`~graphflow.nn.stack.GNNStack` has it); a module without it gives its
last layer only. The graph embedding (what ``what = "embeddings"`` exports) is the
concatenation of the read-out vectors.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from graphflow.graphs.batch import GraphBatch
from graphflow.graphs.readout import Pooling, Readout

ReadoutLayers = Literal["last", "all"]
DropoutOn = Literal["scores", "features"]
DROPOUT_ON: tuple[str, ...] = ("scores", "features")


def has_layer_outputs(module: nn.Module) -> bool:
    """Whether ``module`` offers per-layer outputs (``layer_outputs(adj, x)``)."""
    return callable(getattr(module, "layer_outputs", None))


def graph_inputs(module: nn.Module, batch: GraphBatch) -> dict:
    """What an encoder that reads the batch's graphs (``takes_graphs``: a virtual node,
    :mod:`graphflow.graphs.virtual_node`) gets besides ``(adj, x)``: ``graphs = (node ->
    graph (n,), B)``; nothing for the others."""
    if not getattr(module, "takes_graphs", False):
        return {}
    return {"graphs": (batch.segment(), batch.num_graphs)}


class GraphModel(nn.Module):
    """Node encoder + readout + linear head (see the module docstring).

    :param encoder: the ``[model]``'s module, ``(adj, x) -> (n, D)``.
    :param widths: the widths of the node vectors read out (one per read-out layer); the
        read-out vectors' own widths are ``read_widths`` (twice these for ``set2set``).
    :param out_dim: classes or targets.
    :param pooling: the readout (``sum``, ``mean``, ``max``, ``attention``).
    :param layers: ``last`` or ``all`` (needs ``layer_outputs``).
    :param dropout: the head's dropout rate.
    :param dropout_on: ``scores`` (each layer's scores after its linear map: the GIN recipe)
        or ``features`` (the read-out vectors before the maps).
    """

    def __init__(self, encoder: nn.Module, widths: list[int], out_dim: int, *,
                 pooling: Pooling, layers: ReadoutLayers, dropout: float,
                 dropout_on: DropoutOn = "scores"):
        super().__init__()
        if dropout_on not in DROPOUT_ON:
            raise ValueError(f'unknown dropout placement "{dropout_on}"; choices: '
                             f'{", ".join(DROPOUT_ON)}')
        self.encoder = encoder
        self.read_layers = layers
        self.readouts = nn.ModuleList(Readout(pooling, w) for w in widths)
        self.read_widths = [r.width for r in self.readouts]  # the head's inputs, per layer
        # The per-layer linear maps, initialised as nn.Linear(w_l, out_dim) each, held as two
        # parameters: W = [W_0 ... W_L] (out_dim, sum(read_widths)) and the biases (L + 1, out_dim).
        # Adam and weight decay act entry by entry, so training is that of separate maps; one
        # weight and one bias tensor spare the optimizer its per-tensor work and the forward
        # the concatenation of the maps.
        heads = [nn.Linear(w, out_dim) for w in self.read_widths]
        self.weight = nn.Parameter(torch.cat([h.weight.detach() for h in heads], dim=1))
        self.bias = nn.Parameter(torch.stack([h.bias.detach() for h in heads]))
        self.drop = nn.Dropout(dropout)
        self.dropout_on = dropout_on
        # (L + 1, 1, sum(read_widths)) 0/1, which columns of ``weight`` are layer l's: the
        # block matrix of dropout_on = "scores" is weight times this mask
        column_layer = torch.repeat_interleave(torch.arange(len(self.read_widths)),
                                               torch.tensor(self.read_widths))
        self.register_buffer("layer_mask", (torch.arange(len(self.read_widths))[:, None]
                                            == column_layer[None, :]).float().unsqueeze(1),
                             persistent=False)
        self.widths = list(widths)
        self.out_dim = out_dim
        # Regression targets trained in standard units (scale_targets): the head's output is
        # mapped back, s * target_scale + target_shift; identity otherwise, and after
        # absorb_target_scaling, which moves the map into the head's own weight and bias.
        self.register_buffer("target_scale", torch.ones(out_dim))
        self.register_buffer("target_shift", torch.zeros(out_dim))
        self._scaled = False

    def node_vectors(self, batch: GraphBatch) -> list[torch.Tensor]:
        """The node vectors to read out: every layer's, or the last one's."""
        extra = graph_inputs(self.encoder, batch)
        if self.read_layers == "all":
            return list(self.encoder.layer_outputs(batch.adj, batch.x, **extra))
        return [self.encoder(batch.adj, batch.x, **extra)]

    def forward(self, batch: GraphBatch) -> tuple[torch.Tensor, torch.Tensor]:
        r"""``(scores (B, out_dim), embeddings (B, sum(read_widths)))``.

        The per-layer heads run as one product (``weight`` and ``bias``), in place of one
        product and one sum per layer; the dropout is one draw, each entry kept or dropped
        independently as with one draw per layer, in one call instead of one per layer (each
        call has a fixed cost of tens of microseconds on the CPU). See the module docstring
        for the two placements.
        """
        seg = batch.segment()
        pooled = [r(h, seg, batch.ptr) for r, h in zip(self.readouts, self.node_vectors(batch))]
        emb = pooled[0] if len(pooled) == 1 else torch.cat(pooled, dim=1)  # (B, sum(read_w.))
        return self.score(emb), emb

    def score(self, emb: torch.Tensor) -> torch.Tensor:
        """The head on the read-out vectors ``emb`` (B, sum(read_widths)) -> (B, out_dim),
        with the dropout where ``dropout_on`` puts it (active in training mode only)."""
        dropping = self.training and self.drop.p > 0
        if not dropping:  # one product: sum_l W_l r_l + c_l
            scores = F.linear(emb, self.weight, self.bias.sum(0))
        elif self.dropout_on == "features":
            scores = F.linear(self.drop(emb), self.weight, self.bias.sum(0))
        else:  # every layer's scores (B, L + 1, C) from one product with the block matrix
            layers, c = self.bias.shape
            block = self.weight.unsqueeze(0) * self.layer_mask  # (L + 1, C, W)
            per_layer = F.linear(emb, block.reshape(layers * c, -1), self.bias.reshape(-1))
            scores = self.drop(per_layer.view(-1, layers, c)).sum(1)  # (B, C)
        if self._scaled:
            scores = torch.addcmul(self.target_shift, scores, self.target_scale)
        return scores

    def scale_targets(self, shift: torch.Tensor, scale: torch.Tensor) -> None:
        """Train the head in standard units: its output ``s`` becomes ``s * scale + shift``
        (per target), so that scores stay in the targets' own units while the head fits
        ``(y - shift) / scale``."""
        with torch.no_grad():
            self.target_shift.copy_(shift)
            self.target_scale.copy_(scale)
        self._scaled = True

    def head(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The head with the target map folded in: ``weight`` (out_dim, sum(read_widths)), the
        per-layer ``bias`` (L + 1, out_dim) such that ``emb @ weight.T + bias.sum(0)`` gives
        the scores (what the portable twins and :meth:`absorb_target_scaling` use)."""
        with torch.no_grad():
            scale = self.target_scale
            weight = self.weight * scale[:, None]
            bias = self.bias * scale
            bias[0] += self.target_shift
        return weight, bias

    def absorb_target_scaling(self) -> None:
        """Fold the target map into the head (the same scores, to rounding) and make it the
        identity: a saved model then needs nothing but its weights."""
        if not self._scaled:
            return
        weight, bias = self.head()
        with torch.no_grad():
            self.weight.copy_(weight)
            self.bias.copy_(bias)
            self.target_scale.fill_(1.0)
            self.target_shift.zero_()
        self._scaled = False

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):  # type: ignore[override]
        """Also read the per-layer form (``heads.<l>.weight`` / ``.bias``, one
        ``nn.Linear`` each) that bundles and checkpoints hold from earlier versions."""
        old = [f"{prefix}heads.{i}." for i in range(len(self.widths))]
        if f"{old[0]}weight" in state_dict and f"{prefix}weight" not in state_dict:
            state_dict[f"{prefix}weight"] = torch.cat(
                [state_dict.pop(f"{o}weight") for o in old], dim=1)
            state_dict[f"{prefix}bias"] = torch.stack([state_dict.pop(f"{o}bias") for o in old])
        for name, value in (("target_scale", 1.0), ("target_shift", 0.0)):  # earlier versions
            state_dict.setdefault(f"{prefix}{name}", torch.full((self.out_dim,), value))
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
        self._scaled = bool((self.target_scale != 1).any() or (self.target_shift != 0).any())

    @classmethod
    def probe(cls, encoder: nn.Module, batch: GraphBatch, layers: ReadoutLayers,
              out_dim: int, *, pooling: Pooling, dropout: float,
              dropout_on: DropoutOn = "scores") -> GraphModel:
        """Build one for ``encoder``, finding the read-out widths from one forward pass on
        ``batch`` (so that any third-party model works without declaring its widths)."""
        was = encoder.training
        encoder.eval()
        with torch.no_grad():
            extra = graph_inputs(encoder, batch)
            if layers == "all":
                outs = list(encoder.layer_outputs(batch.adj, batch.x, **extra))
            else:
                outs = [encoder(batch.adj, batch.x, **extra)]
        encoder.train(was)
        widths = [int(h.reshape(h.shape[0], -1).shape[1]) for h in outs]
        return cls(encoder, widths, out_dim, pooling=pooling, layers=layers, dropout=dropout,
                   dropout_on=dropout_on)
