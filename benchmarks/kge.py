"""Knowledge-graph embedding training: graphflow's ``kg_completion`` pieces vs PyKEEN.

The same model at the same settings in one process: DistMult (or ``--model``), ``--dim``,
``--negatives`` uniform head-or-tail corruptions per positive (PyKEEN's ``basic`` sampler),
``--batch`` positives a step, Adagrad at ``--lr``, the softplus of every score against its
label averaged over all scores (graphflow ``loss = "bce"``, PyKEEN ``SoftplusLoss``), no
regulariser, no reciprocal relations, and the same model (PyKEEN's arguments in
:data:`SAME_MODEL`: no unit-norm constraint on entity rows). The peers' epochs alternate (``benchmarks/records.py``:
A B, B A, ...), so background load hits both alike; after every epoch pair both are ranked
with the filtered protocol on the test split (graphflow: :mod:`graphflow.kge.evaluate`,
PyKEEN: ``RankBasedEvaluator``, realistic ranks), outside the timers.

Figures: seconds per epoch for each (median, min, max of the timed epochs), their ratio
(PyKEEN / graphflow), and the filtered test MRR after every epoch pair.

    pip install pykeen -c constraints.txt
    flock /tmp/graphflow-bench.lock python benchmarks/kge.py --data ../shared/data/wn18rr \
        [--epochs 5] [--dim 200] [--negatives 64] [--batch 1000] [--lr 0.1] [--record]

``--tiny N`` replaces the data by a generated graph of N entities (what the test runs). The
last output line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.records import alternate, load, ratio_spread, spread, write  # noqa: E402
from graphflow.kge.evaluate import Filter, evaluate  # noqa: E402
from graphflow.kge.models import MODELS  # noqa: E402
from graphflow.kge.train import KgePass, TrainSettings, make_optimizer  # noqa: E402
from graphflow.kge.triples import KnowledgeGraph, read_triples  # noqa: E402
from graphflow.train.step import Step  # noqa: E402

PYKEEN_MODELS = {"distmult": "DistMult", "complex": "ComplEx", "transe": "TransE",
                 "rotate": "RotatE"}
SAME_MODEL: dict[str, dict[str, object]] = {
    "distmult": {"entity_initializer": "xavier_normal", "relation_initializer": "xavier_normal",
                 "entity_constrainer": None},
    "transe": {"entity_constrainer": None},
}
"""PyKEEN's arguments that make its model graphflow's: its DistMult and TransE normalise every
entity row to unit length after each step by default (``entity_constrainer``), which graphflow's
models (and the papers' DistMult) do not; DistMult starts from graphflow's Xavier normal tables."""


def tiny_graph(n: int, seed: int) -> KnowledgeGraph:
    g = torch.Generator().manual_seed(seed)
    m = 6 * n
    tri = torch.unique(torch.stack([torch.randint(0, n, (m,), generator=g),
                                    torch.randint(0, 3, (m,), generator=g),
                                    torch.randint(0, n, (m,), generator=g)], 1), dim=0)
    tri = tri[torch.randperm(len(tri), generator=g)]
    k = max(1, len(tri) // 20)
    train = tri[2 * k:]
    seen = torch.zeros(n, dtype=torch.bool)
    seen[train[:, 0]] = seen[train[:, 2]] = True
    held = tri[:2 * k]
    held = held[seen[held[:, 0]] & seen[held[:, 2]]]
    half = max(1, len(held) // 2)
    return KnowledgeGraph(entities=np.array([f"e{i}" for i in range(n)], dtype=object),
                          relations=np.array(["r0", "r1", "r2"], dtype=object),
                          splits={"train": train, "valid": held[:half], "test": held[half:]},
                          name=f"tiny{n}")


class Graphflow:
    def __init__(self, kg: KnowledgeGraph, a: argparse.Namespace):
        torch.manual_seed(a.seed)
        self.kg = kg
        self.model = MODELS[a.model](kg.num_entities, kg.num_relations, a.dim)
        step = Step(self.model, make_optimizer("adagrad", self.model, a.lr),
                    torch.device("cpu"), "fp32")
        settings = TrainSettings(batch_size=a.batch, negatives=a.negatives, loss="bce")
        self.epoch_pass = KgePass(self.model, step, kg.splits["train"], settings,
                                  torch.Generator().manual_seed(a.seed))
        self.filter = Filter.build(kg.known(), kg.num_entities, kg.num_relations)

    def epoch(self, rep: int) -> None:
        self.epoch_pass.train_epoch(rep)

    def mrr(self) -> float:
        return evaluate(self.model, self.kg.splits["test"], self.filter)["test_mrr"]


class PyKeen:
    def __init__(self, kg: KnowledgeGraph, a: argparse.Namespace):
        import pykeen.models
        from pykeen.losses import SoftplusLoss
        from pykeen.training import SLCWATrainingLoop
        from pykeen.triples import CoreTriplesFactory

        ids = {s: kg.splits[s][:, [0, 1, 2]].long() for s in ("train", "valid", "test")}
        self.factory = CoreTriplesFactory.create(ids["train"], num_entities=kg.num_entities,
                                                 num_relations=kg.num_relations)
        self.ids = ids
        cls = getattr(pykeen.models, PYKEEN_MODELS[a.model])
        self.model = cls(triples_factory=self.factory, embedding_dim=a.dim,
                         loss=SoftplusLoss(), regularizer=None, random_seed=a.seed,
                         **SAME_MODEL.get(a.model, {}))
        optimizer = torch.optim.Adagrad(self.model.get_grad_params(), lr=a.lr)
        self.loop = SLCWATrainingLoop(model=self.model, triples_factory=self.factory,
                                      optimizer=optimizer, negative_sampler="basic",
                                      negative_sampler_kwargs={"num_negs_per_pos":
                                                               a.negatives})
        self.batch = a.batch

    def epoch(self, rep: int) -> None:
        self.loop.train(triples_factory=self.factory, num_epochs=rep + 1,
                        batch_size=self.batch, use_tqdm=False, continue_training=rep > 0)

    def mrr(self) -> float:
        from pykeen.evaluation import RankBasedEvaluator

        result = RankBasedEvaluator(filtered=True).evaluate(
            self.model, self.ids["test"], additional_filter_triples=[self.ids["train"],
                                                                     self.ids["valid"]],
            batch_size=256, use_tqdm=False)
        return float(result.get_metric("both.realistic.inverse_harmonic_mean_rank"))


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "wn18rr")
    p.add_argument("--tiny", type=int, default=0, help="a generated graph of N entities")
    p.add_argument("--model", choices=sorted(PYKEEN_MODELS), default="distmult")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--dim", type=int, default=200)
    p.add_argument("--negatives", type=int, default=64)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--record", action="store_true", help="save under benchmarks/results/kge/")
    a = p.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    before = load()
    kg = tiny_graph(a.tiny, a.seed) if a.tiny else read_triples(a.data, unseen="drop")
    peers = {"graphflow": Graphflow(kg, a), "pykeen": PyKeen(kg, a)}
    calls: list[str] = []
    mrr: dict[str, list[float]] = {name: [] for name in peers}

    def side(name: str):
        def run(rep: int) -> None:
            peers[name].epoch(rep)
            calls.append(name)
        return run

    def after(name: str, rep: int, seconds: float) -> None:
        mrr[name].append(round(peers[name].mrr(), 4))  # outside the timer
        print(f"epoch {rep + 1} {name}: {seconds:.2f} s, filtered test MRR "
              f"{mrr[name][-1]:.4f}", file=sys.stderr, flush=True)

    times = alternate({n: side(n) for n in peers}, a.epochs, on_time=after)
    result = {"data": kg.name, "entities": kg.num_entities, "train": len(kg.splits["train"]),
              "settings": {k: getattr(a, k) for k in ("model", "dim", "negatives", "batch",
                                                      "lr", "epochs", "seed")},
              "calls": calls, "repetitions": times, "mrr": mrr,
              **{f"{n}_epoch_s": round(spread(t)["median"], 4) for n, t in times.items()},
              "epoch_spread": {n: spread(t) for n, t in times.items()},
              "ratio_spread": ratio_spread(times["pykeen"], times["graphflow"])}
    if a.record:
        write("kge", result, load_before=before)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
