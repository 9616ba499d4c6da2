"""``graphflow doctor``: is this machine ready? Versions, CUDA, and a checked sparse matmul."""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch

from graphflow.record import package_versions


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("doctor", parents=[common], help="check the installation and devices")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_doctor)


def spmm_check(device: torch.device, *, nodes: int = 64, edges: int = 512) -> dict[str, Any]:
    """Sparse CSR matmul with backward on ``device``, checked against dense autograd."""
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


def report() -> dict[str, Any]:
    info: dict[str, Any] = {"versions": package_versions()}
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
    return info


def cmd_doctor(args: argparse.Namespace) -> int:
    info = report()
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        for name, version in info["versions"].items():
            print(f"{name:>10}: {version or 'not installed'}")
        print(f"{'graphbolt':>10}: {info['dgl_graphbolt']}")
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
    return 0 if all(c["ok"] for c in info["spmm"]) else 1
