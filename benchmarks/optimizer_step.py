"""One optimizer step, flat parameter groups against torch's per-tensor form, side by side.

``graphflow.train.optim.make_optimizer`` gathers a group's parameters into one buffer
(``graphflow.train.flat``) when its tensors are small on average (``MAX_MEAN_BYTES``): a step
then copies the gradients in and updates one tensor, where torch's fused Adam walks every
tensor in Python first. This times ``step()`` of three forms (Adam, torch's fused kernel):
what ``make_optimizer`` builds, flat groups whatever the size (``gathered``), and torch's, on
the parameter shapes of four models in one process, with the caches warm (steps back to back)
and cold (a 32 MB pass and fresh gradients before each step, as after a backward pass). Each
case runs ``--rounds`` rounds of the three forms, the order reversed every round
(``benchmarks/records.py``); it prints the median round of each form with its range and count
(the fastest labelled ``best``) and the ratios of the medians::

    flock /tmp/graphflow-bench.lock python benchmarks/optimizer_step.py [--record]

A component figure: ``benchmarks/graph_classification.py`` times whole epochs. The output
starts with the machine (``benchmarks/machine.py``; ``--threads`` sets torch's), and the
JSON line records it under ``"machine"``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from graphflow.train import flat as flat_module  # noqa: E402
from graphflow.train.flat import FlatMixin, flat  # noqa: E402
from graphflow.train.optim import make_optimizer  # noqa: E402

from benchmarks import machine, records  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import spread, write  # noqa: E402

CASES = {
    "GIN, 5 layers x 64 (24 tensors)": [(64, 16), (64,), (64, 64), (64,), (64,), (64,)] * 4,
    "relation weights (40 x 64 x 128)": [(64, 128)] * 40,
    "attention layers (12 tensors)": [(256, 128), (8, 32), (8, 32), (256,)] * 3,
    "GraphSAGE, 3 layers x 256 (6 tensors)": [(256, 200), (256,), (256, 512), (256,),
                                               (48, 512), (48,)],
}


def time_steps(shapes: list[tuple[int, ...]], form: str, steps: int,
               junk: torch.Tensor) -> dict[str, float]:
    """Microseconds per ``step()``, warm and cold, for Adam over ``shapes``: ``form`` is
    ``make_optimizer`` (its rule decides), ``gathered`` (flat groups whatever the tensors'
    size) or ``torch`` (torch's optimizer)."""
    module = nn.Module()
    module.ps = nn.ParameterList([nn.Parameter(torch.randn(s)) for s in shapes])
    if form == "gathered":
        opt = flat(torch.optim.Adam)(module.parameters(), lr=0.01, fused=True)
    else:
        opt = make_optimizer("adam", module, lr=0.01, weight_decay=0.0,
                             flat_groups=form == "make_optimizer")
    params = list(module.parameters())
    for p in params:
        p.grad = torch.randn_like(p)
    for _ in range(20):
        opt.step()
    warm = 0.0
    for _ in range(steps):
        t = time.perf_counter()
        opt.step()
        warm += time.perf_counter() - t
    cold = 0.0
    for _ in range(steps):
        junk.add_(1.0)  # evicts the parameters, states and gradients from the caches
        for p in params:
            p.grad = torch.randn_like(p)
        t = time.perf_counter()
        opt.step()
        cold += time.perf_counter() - t
    gathered = isinstance(opt, FlatMixin)
    return {"warm_us": warm / steps * 1e6, "cold_us": cold / steps * 1e6,
            "tensors_stepped": sum(len(g["params"]) for g in opt.param_groups),
            "gathered": bool(gathered)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300, help="timed steps per case and form")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds of the forms, the order reversed every round; medians kept")
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/optimizer_step/ "
                        "(benchmarks/records.py)")
    a = p.parse_args()
    load_before = load_average()
    if a.steps < 1 or a.rounds < 1:
        p.error("--steps and --rounds must be at least 1")
    machine.set_threads(a.threads)
    info = machine.show()
    junk = torch.randn(8_000_000)
    out = {}
    forms = ("make_optimizer", "gathered", "torch")
    for name, shapes in CASES.items():
        rounds: dict[str, list[dict[str, float]]] = {form: [] for form in forms}

        def side(form: str, shapes=shapes, rounds=rounds):
            def run(rep: int) -> float:
                limit = flat_module.MAX_MEAN_BYTES
                if form == "gathered":  # the size rule lifted for this form only
                    flat_module.MAX_MEAN_BYTES = 1 << 62
                try:
                    got = time_steps(shapes, form, a.steps, junk)
                finally:
                    flat_module.MAX_MEAN_BYTES = limit
                rounds[form].append(got)
                return got["warm_us"]
            return run

        raced = records.race({form: side(form) for form in forms}, a.rounds,
                             measure=lambda fn, rep: fn(rep))
        summary: dict[str, dict] = {}
        for form in forms:
            warm = [r["warm_us"] for r in rounds[form]]
            cold = [r["cold_us"] for r in rounds[form]]
            summary[form] = {**rounds[form][-1], "warm_us": statistics.median(warm),
                             "cold_us": statistics.median(cold), "warm_spread": spread(warm),
                             "cold_spread": spread(cold)}
        f, g, t = (summary[k] for k in forms)
        print(f"{name}: make_optimizer {'gathers' if f['gathered'] else 'keeps torch form'}"
              f" ({f['tensors_stepped']} tensors stepped); us a step warm / cold: "
              f"make_optimizer {f['warm_us']:.0f} / {f['cold_us']:.0f}, gathered "
              f"{g['warm_us']:.0f} / {g['cold_us']:.0f}, torch {t['warm_us']:.0f} / "
              f"{t['cold_us']:.0f}; torch over make_optimizer {t['warm_us'] / f['warm_us']:.2f}x"
              f" / {t['cold_us'] / f['cold_us']:.2f}x, over gathered "
              f"{t['warm_us'] / g['warm_us']:.2f}x / {t['cold_us'] / g['cold_us']:.2f}x "
              f"(medians of {a.rounds} rounds)", file=sys.stderr)
        for form in forms:
            warm = records.line([r["warm_us"] for r in rounds[form]], unit="us", digits=0)
            cold = records.line([r["cold_us"] for r in rounds[form]], unit="us", digits=0)
            print(f"  {form:<14} warm {warm}; cold {cold}", file=sys.stderr)
        out[name] = {**summary, "calls": raced.calls, "orders": raced.orders,
                     "warm_ratio": t["warm_us"] / f["warm_us"],
                     "cold_ratio": t["cold_us"] / f["cold_us"],
                     "gathered_warm_ratio": t["warm_us"] / g["warm_us"],
                     "gathered_cold_ratio": t["cold_us"] / g["cold_us"]}
    result = {"machine": info, "threads": a.threads, "steps": a.steps, "rounds": a.rounds,
              "cases": out}
    if a.record:
        write("optimizer_step", result, load_before=load_before)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
