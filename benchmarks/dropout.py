"""Dropout on the CPU: torch's ``F.dropout`` vs ``graphflow.sparse.dropout.dropout``, side by side.

The shapes are those a training step drops (the ``[model] dropout`` default 0.5 applies to
every layer's input):

* ``sage input``: the 82k x 100 input features of a sampled 1M-node GraphSAGE batch
  (``benchmarks/sampling.py``; forward only, the features need no gradient);
* ``sage hidden``: its 16k x 256 first hidden layer (forward and backward);
* ``arxiv hidden``: a full-batch GCN's 169k x 16 hidden layer (``benchmarks/gcn.py``);
* ``cora input``: Cora's 2708 x 1433 features, dense (forward only);
* ``gat attention``: 8-head attention on 1.3M edges (forward and backward).

Each row runs two untimed rounds, then ``--rounds`` timed rounds, the order of the peers
reversed every round (``benchmarks/records.py``), and prints each peer's median milliseconds per
call with the range of its rounds (every round in the JSON) and the ratio of
the medians. ``--record`` saves the figures under ``benchmarks/results/dropout/``.
Whole-epoch figures: ``benchmarks/sampling.py --dropout 0.5`` (sampled
GraphSAGE against DGL, each with its own dropout) and ``benchmarks/gcn.py``::

    flock /tmp/graphflow-bench.lock python benchmarks/dropout.py

The process keeps freed memory as ``graphflow run`` does (``graphflow.runtime.allocator``,
``--allocator system`` for glibc's default). The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from benchmarks import records  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import write  # noqa: E402
from graphflow.runtime import allocator  # noqa: E402
from graphflow.sparse.dropout import dropout  # noqa: E402

CASES = [  # name, shape, needs a backward
    ("sage input", (82_000, 100), False),
    ("sage hidden", (16_000, 256), True),
    ("arxiv hidden", (169_343, 16), True),
    ("cora input", (2_708, 1_433), False),
    ("gat attention", (1_334_049, 8), True),
]


def call_ms(fn, x: torch.Tensor, p: float, backward: bool) -> float:
    t = time.perf_counter()
    y = fn(x, p, True)
    if backward:
        y.backward(torch.ones_like(y))
    return (time.perf_counter() - t) * 1e3


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--p", type=float, nargs="+", default=[0.5, 0.3])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--allocator", choices=["retain", "system"], default="retain")
    ap.add_argument("--record", action="store_true",
                    help="save the figures under benchmarks/results/dropout/ "
                         "(benchmarks/records.py)")
    a = ap.parse_args(argv)
    load_before = load_average()
    malloc = allocator.apply(a.allocator)["allocator"]
    torch.manual_seed(0)
    peers = {"torch": F.dropout, "graphflow": dropout}
    rows = []
    print(f"dropout, {torch.get_num_threads()} threads, malloc {malloc}; median ms per call "
          f"(forward, + backward where marked) of {a.rounds} rounds, the order reversed every "
          f"round, (min-max)")
    for p in a.p:
        for name, shape, backward in CASES:
            x = torch.randn(*shape, requires_grad=backward)
            raced = records.race({peer: (lambda rep, fn=fn, x=x, p=p, backward=backward:
                                         call_ms(fn, x, p, backward))
                                  for peer, fn in peers.items()},
                                 a.rounds, warmup=2, measure=lambda side, rep: side(rep))
            med = {k: raced.median(k) for k in peers}
            ratio = med["torch"] / med["graphflow"]
            sp = {k: raced.spread(k) for k in peers}
            what = f"{name} {shape[0]:,} x {shape[1]}" + (" +bwd" if backward else "")
            print(f"  p={p}  {what:32s} torch {med['torch']:8.2f} "
                  f"({sp['torch']['min']:.2f}-{sp['torch']['max']:.2f})  graphflow "
                  f"{med['graphflow']:7.2f} ({sp['graphflow']['min']:.2f}-"
                  f"{sp['graphflow']['max']:.2f})  {ratio:5.1f}x", flush=True)
            rows.append({"p": p, "case": name, "shape": list(shape), "backward": backward,
                         "torch_ms": round(med["torch"], 3),
                         "graphflow_ms": round(med["graphflow"], 3), "ratio": round(ratio, 2),
                         **raced.record()})
    out = {"benchmark": "dropout", "threads": torch.get_num_threads(), "allocator": malloc,
           "rounds": a.rounds, "results": rows}
    if a.record:
        write("dropout", out, load_before=load_before)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
