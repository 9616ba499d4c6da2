"""``graphflow doctor``: is this machine ready? Versions, plugins, the CPU and its measured
choices (graphflow.runtime.calibrate), CUDA, and a checked sparse matmul. Exit code 1 when the sparse
matmul fails on a device or a plugin failed to load."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("doctor", parents=[common], help="check the installation and devices")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--calibrate", dest="calibration", action="store_const", const="force",
                     help="measure this machine's choices again (dense-product backend per "
                          "shape, core splits) and rewrite the cache")
    how.add_argument("--no-calibrate", dest="calibration", action="store_const", const="off",
                     help="measure nothing: show the fixed rules a run falls back to")
    p.set_defaults(func=cmd_doctor)


def spmm_check(device: torch.device, *, nodes: int = 64, edges: int = 512) -> dict[str, Any]:
    """Sparse CSR matmul with backward on ``device``, checked against dense autograd."""
    import torch

    gen = torch.Generator().manual_seed(0)
    src = torch.randint(0, nodes, (edges,), generator=gen)
    dst = torch.randint(0, nodes, (edges,), generator=gen)
    vals = torch.rand(edges, generator=gen, dtype=torch.float64)
    x = torch.randn(nodes, 8, generator=gen, dtype=torch.float64)
    try:
        from graphflow.sparse import Adjacency, spmm

        adj = Adjacency.from_edges(src.to(device), dst.to(device), nodes, nodes)
        # copy=True: on the CPU .to() would alias vals/x, making the dense copies non-leaves.
        v = vals.to(device, copy=True).requires_grad_()
        xs = x.to(device, copy=True).requires_grad_()
        out = spmm(adj, xs, v[adj.eids])  # spmm takes values in CSR order
        out.square().sum().backward()
        dense = torch.zeros(nodes, nodes, dtype=torch.float64)
        vd = vals.clone().requires_grad_()
        xd = x.clone().requires_grad_()
        dense = dense.index_put((dst, src), vd, accumulate=True)
        ref = dense @ xd
        ref.square().sum().backward()
        # Values of duplicate edges are summed in `dense`, so compare their gradients per edge.
        errs = [(out.detach().cpu() - ref.detach()).abs().max().item(),
                (xs.grad.cpu() - xd.grad).abs().max().item(),
                (v.grad.cpu() - vd.grad).abs().max().item()]
        ok = max(errs) < 1e-8
        return {"device": str(device), "ok": ok, "max_abs_error": max(errs)}
    except Exception as exc:  # doctor reports failures rather than dying on them
        return {"device": str(device), "ok": False, "error": f"{type(exc).__name__}: {exc}"}


def semi_structured_check(device: torch.device, *, rows: int = 64,
                          width: int = 128) -> dict[str, Any]:
    """Can ``device`` run 2:4 semi-structured sparse matmuls (cuSPARSELt through torch)?

    On CUDA sm80+ a tiny 2:4 float16 ``nn.Linear`` weight is converted with
    ``torch.sparse.to_sparse_semi_structured`` and multiplied by a strided input, against the
    dense product. ``supported`` is False with the ``reason`` elsewhere; that only means the
    ``sparsify`` task keeps masked dense weights there (no speed-up), never an error.
    """
    import torch

    from graphflow.pruning import two_four as sparsity

    out: dict[str, Any] = {"device": str(device)}
    try:
        out["cusparselt"] = torch.backends.cusparselt.version() \
            if torch.backends.cusparselt.is_available() else None
    except Exception:  # an older torch without the backend module
        out["cusparselt"] = None
    reason = sparsity.sparse_support(device)
    if reason:
        return {**out, "supported": False, "reason": reason}
    try:
        gen = torch.Generator(device=device).manual_seed(0)
        w = torch.randn(width, width, device=device, generator=gen).half()
        w = w * sparsity.two_four_mask(w)
        x = torch.randn(rows, 2 * width, device=device, generator=gen).half()[:, ::2]
        sparse = torch.sparse.to_sparse_semi_structured(w)
        got = torch.nn.functional.linear(x.contiguous(), sparse).float()
        ref = x.float() @ w.float().t()
        err = ((got - ref).norm() / ref.norm()).item()
        ok = err < 1e-2
        return {**out, "supported": ok, "relative_error": err,
                **({} if ok else {"reason": f"sparse result differs from dense ({err:.1e})"})}
    except Exception as exc:
        return {**out, "supported": False, "reason": f"{type(exc).__name__}: {exc}"[:300]}


def plugins_check() -> dict[str, Any]:
    """The plugins that loaded and those that failed to (with their error and the fix)."""
    from graphflow.errors import GraphflowError
    from graphflow.manager import create_host

    try:
        host = create_host(warn=lambda line: None)  # reported here instead
    except GraphflowError as exc:
        return {"ok": False, "loaded": [], "broken": [], "error": str(exc)}
    return {"ok": not host.broken, "loaded": sorted(host.plugins),
            "broken": [b.as_dict() for b in host.broken.values()]}


def report(calibration: str | None = None) -> dict[str, Any]:
    import torch

    from graphflow.runtime import calibrate
    from graphflow.record import package_versions

    info: dict[str, Any] = {"versions": package_versions(), "plugins": plugins_check(),
                            "cpu": calibrate.cpu_info(),
                            "libraries": calibrate.library_versions(),
                            "caps": calibrate.env_caps()}
    info["calibration"] = calibrate.report(how=calibration)
    try:
        from graphflow.compat.dgl import graphbolt_is_stubbed
        info["dgl_graphbolt"] = "stubbed (no build for this torch)" if graphbolt_is_stubbed() else "native"
    except Exception as exc:
        info["dgl_graphbolt"] = f"DGL import failed: {exc}"
    devices = [torch.device("cpu")]
    cuda: dict[str, Any] = {"available": torch.cuda.is_available(), "build": torch.version.cuda}
    if torch.cuda.is_available():
        cuda["devices"] = []
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            cuda["devices"].append({"index": i, "name": props.name,
                                    "memory_gib": round(props.total_memory / 2**30, 1)})
            devices.append(torch.device("cuda", i))
    info["cuda"] = cuda
    info["spmm"] = [spmm_check(d) for d in devices]
    info["semi_structured"] = [semi_structured_check(d) for d in devices]
    return info


def cmd_doctor(args: argparse.Namespace) -> int:
    info = report(getattr(args, "calibration", None))
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        for name, version in info["versions"].items():
            print(f"{name:>10}: {version or 'not installed'}")
        libs = info["libraries"]
        print(f"{'mkl':>10}: {libs['mkl'] or 'not built in'}")
        print(f"{'onednn':>10}: {libs['onednn'] or 'not built in'}")
        print(f"{'graphbolt':>10}: {info['dgl_graphbolt']}")
        plugins = info["plugins"]
        if "error" in plugins:
            print(f"{'plugins':>10}: FAIL ({plugins['error']})")
        else:
            print(f"{'plugins':>10}: {len(plugins['loaded'])} loaded "
                  f"({', '.join(plugins['loaded'])})")
        for b in plugins["broken"]:
            origin = " ".join(x for x in (b["dist"], b["version"]) if x)
            print(f"{'plugins':>10}: BROKEN \"{b['name']}\" ({origin}) failed {b['failed']}: "
                  f"{b['error']} (fix: {b['fix']})")
        cpu = info["cpu"]
        print(f"{'cpu':>10}: {cpu['model_name']} (family {cpu['family']} model {cpu['model']}, "
              f"{cpu['cores']} cores): {' '.join(cpu['isa']) or 'no AVX'}")
        caps = ", ".join(f"{k}={v}" for k, v in info["caps"].items())
        print(f"{'caps':>10}: {caps}")
        _print_calibration(info["calibration"])
        cuda = info["cuda"]
        if cuda["available"]:
            for d in cuda["devices"]:
                print(f"{'cuda:' + str(d['index']):>10}: {d['name']}, {d['memory_gib']} GiB")
        else:
            print(f"{'cuda':>10}: not available (torch build: {cuda['build'] or 'CPU only'})")
        for check in info["spmm"]:
            verdict = "pass" if check["ok"] else "FAIL"
            detail = f"max error {check['max_abs_error']:.1e}" if "max_abs_error" in check \
                else check.get("error", "")
            print(f"{'spmm':>10}: {verdict} on {check['device']} ({detail})")
        for check in info["semi_structured"]:
            if check["supported"]:
                detail = (f"cuSPARSELt {check['cusparselt']}, relative error "
                          f"{check['relative_error']:.1e}")
                print(f"{'2:4':>10}: supported on {check['device']} ({detail})")
            else:
                print(f"{'2:4':>10}: not supported on {check['device']} ({check['reason']})")
    return 0 if info["plugins"]["ok"] and all(c["ok"] for c in info["spmm"]) else 1


def _print_calibration(calibration: dict[str, Any]) -> None:
    """The measured choices: where they come from, each bucket's backend and timings."""
    gemm_part, cores_part = calibration["gemm"], calibration["cores"]
    print(f"{'calibrate':>10}: mode {calibration['mode']}, cache {calibration['cache']}")
    source = gemm_part["source"]
    for name, backend in gemm_part["buckets"].items():
        ms = gemm_part.get("ms", {}).get(name)
        timing = f" (torch {ms['torch']:.2f} ms, oneDNN {ms['onednn']:.2f} ms)" if ms else ""
        print(f"{'gemm':>10}: {name}: {backend}{timing} [{source}]")
    plans = cores_part.get("plans", {})
    if not plans:
        print(f"{'cores':>10}: the fixed policy (graphflow.runtime.cores) [{cores_part['source']}]")
    for workload, split in plans.items():
        print(f"{'cores':>10}: {workload}: {split['workers']} workers x {split['worker_threads']}"
              f" threads, {split['threads']} training threads, of {cores_part.get('budget')} "
              f"[{cores_part['source']}]")
    for part in (gemm_part, cores_part):
        if part.get("load_average") is not None:
            print(f"{'measured':>10}: {part.get('measured_at')}, load {part['load_average']}, "
                  f"{part.get('seconds')} s")
