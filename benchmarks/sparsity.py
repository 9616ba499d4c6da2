"""Inference time of dense against 2:4 semi-structured ``nn.Linear`` stacks, side by side.

For each width ``W`` in ``--widths`` (default 256 to 4096) the model is ``--depth`` layers
``nn.Linear(W, W)`` with ReLU between them, fed ``--rows`` rows (the nodes of a batch). The
dense model and its 2:4-pruned copy (``graphflow.pruning.two_four``: magnitude pruning, then
``convert``) run on the same device and input in ``--rounds`` rounds, the order of the two
reversed every round (``benchmarks/records.py``); a round is the median of ``--repeats`` calls
after warm-up. We report each model's median round with its range and count (the fastest
labelled ``best``), the ratio of the medians dense / sparse (> 1: the sparse model is faster)
and the relative error of the sparse output against the dense pruned one. ``--record`` saves
the figures under ``benchmarks/results/sparsity/``.

On CUDA sm80+ (A100, H100) both models run in ``--dtype`` (float16 by default: the sparse
tensor cores take float16, bfloat16 or int8). Elsewhere there are no 2:4 kernels: the pruned
model is the dense model with zeros in it, so the script times the two dense models and says
that no speed-up is expected (the ratio shows noise around 1.0).

    python benchmarks/sparsity.py [--device cpu|cuda] [--rows 8192] [--widths 256 1024 4096]
    python benchmarks/sparsity.py --backend torchao     # torchao's sparsify_ (if installed)

Torch only (no DGL). The last output line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from benchmarks import records  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import write  # noqa: E402
from graphflow.pruning import two_four  # noqa: E402

WIDTHS = (256, 512, 1024, 2048, 4096)


def measure(width: int, args: argparse.Namespace, device: torch.device,
            dtype: torch.dtype) -> dict:
    dense = two_four.linear_stack(width, args.depth, device=device, dtype=dtype)
    pruned = copy.deepcopy(dense)
    layers, _ = two_four.select_layers(pruned)
    two_four.prune(layers)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", two_four.SparsityFallbackWarning)
        reports = two_four.convert(pruned, device, dtype=args.dtype, backend=args.backend)
    caught = [w for w in caught if issubclass(w.category, two_four.SparsityFallbackWarning)]
    converted = sum(r.status == "converted" for r in reports)
    gen = torch.Generator(device=device).manual_seed(1)
    x = torch.randn(args.rows, width, device=device, dtype=dtype, generator=gen)
    err = float("nan")
    with torch.no_grad():
        if converted:  # compare with the same pruned weights computed densely
            masked = copy.deepcopy(dense)
            two_four.prune(two_four.select_layers(masked)[0])
            ref_out = masked(x).float()
            err = ((pruned(x).float() - ref_out).norm() / ref_out.norm()).item()
    run_dense, run_sparse = (lambda: dense(x)), (lambda: pruned(x))
    graph_note = ""
    if args.cuda_graph and device.type == "cuda":
        try:
            run_dense, run_sparse = graphed(dense, x), graphed(pruned, x)
        except Exception as exc:  # report, and time eagerly
            graph_note = f"CUDA graph capture failed: {type(exc).__name__}: {exc}"[:200]
    # the order reversed every round, so that background noise hits both alike
    raced = records.race({"dense": run_dense, "sparse": run_sparse}, args.rounds,
                         measure=lambda fn, rep: two_four.time_call(fn, device,
                                                                    repeats=args.repeats))
    d, s = raced.median("dense"), raced.median("sparse")
    return {"width": width, "dense_ms": d * 1e3, "sparse_ms": s * 1e3, "ratio": d / s,
            "ratio_spread": raced.ratio("dense", "sparse"), **raced.record(scale=1e3),
            "converted_layers": converted, "layers": len(reports), "rel_error": err,
            "fallbacks": [str(w.message) for w in caught], "graph_note": graph_note}


def graphed(model: torch.nn.Module, x: torch.Tensor):
    """``model(x)`` captured in a CUDA graph: the replay skips the host work of each call
    (torch 2.11 sets up cuSPARSELt's plan on the host at every sparse matmul)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(stream):
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        model(x)
    return graph.replay


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--widths", type=int, nargs="+", default=list(WIDTHS))
    p.add_argument("--rows", type=int, default=8192)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--dtype", choices=sorted(two_four.DTYPES), default="float16")
    p.add_argument("--backend", choices=["auto", "torch", "torchao"], default="torch")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cuda-graph", action="store_true",
                   help="time CUDA-graph replays of both models (no per-call host work)")
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/sparsity/ "
                        "(benchmarks/records.py)")
    args = p.parse_args()
    load_before = load_average()
    device = torch.device(args.device)
    why_not = two_four.sparse_support(device)
    dtype = two_four.DTYPES[args.dtype] if why_not is None else torch.float32
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        cap = "sm%d%d" % torch.cuda.get_device_capability(device)
    else:
        name, cap = "cpu", "-"
    print(f"device {device} ({name} {cap}), torch {torch.__version__}, dtype {dtype}, "
          f"rows {args.rows}, depth {args.depth}, backend {args.backend}"
          f"{', CUDA graphs' if args.cuda_graph else ''}")
    if why_not:
        print(f"NOTE: {why_not}. The 'sparse' model below is the pruned model run densely: "
              f"its ratio is noise around 1.0. 2:4 kernels exist only on NVIDIA sm80+ GPUs "
              f"(cuSPARSELt / CUTLASS sparse tensor cores).")
    print(f"medians of {args.rounds} rounds (the order reversed every round), each the median of "
          f"{args.repeats} calls; [min-max] of the rounds")
    print(f"{'width':>6} {'dense ms':>10} {'2:4 ms':>10} {'dense/2:4':>10} {'converted':>10} "
          f"{'rel err':>9}  {'dense range':>17} {'2:4 range':>17}")
    rows = []
    for width in args.widths:
        r = measure(width, args, device, dtype)
        rows.append(r)
        print(f"{r['width']:>6} {r['dense_ms']:>10.3f} {r['sparse_ms']:>10.3f} "
              f"{r['ratio']:>9.2f}x {r['converted_layers']:>5}/{r['layers']:<4} "
              f"{r['rel_error']:>9.1e}  "
              + "  ".join(f"[{r['spread'][k]['min']:.3f}-{r['spread'][k]['max']:.3f}]"
                          for k in ("dense", "sparse")))
        for message in r["fallbacks"][:1] + ([r["graph_note"]] if r["graph_note"] else []):
            print(f"       note: {message}")
    out = {"device": str(device), "name": name, "capability": cap,
           "torch": torch.__version__, "dtype": str(dtype), "rows": args.rows,
           "depth": args.depth, "backend": args.backend, "cuda_graph": args.cuda_graph,
           "rounds": args.rounds, "repeats": args.repeats,
           "speedup_expected": why_not is None, "results": rows}
    if args.record:
        write("sparsity", out, load_before=load_before)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
