"""Machine-dependent choices, measured on the machine that runs them, and cached.

Which backend computes a layer's dense products faster (MKL through torch, or oneDNN), and
how a training stage should split the cores (sample inline or in a background worker, how
many Hogwild trainers, how many intra-op threads) depend on the CPU: its instruction sets
(AVX2, AVX-512, AMX), its cores, and the libraries' kernels for them. A rule tuned on one
machine loses on another (oneDNN's products, twice as fast as MKL's on an AVX-512 EPYC,
were 1.5x slower a batch on an AVX2 one). So graphflow measures them, once per machine:

``gemm``
    For each shape bucket of :func:`graphflow.sparse.gemm.bucket` (size x output width), one
    representative ``x W^T + b`` with both gradients (rows varying +-5% per call, as a
    sampler's do), torch and oneDNN alternating call by call; oneDNN is chosen where its
    median is below :data:`ONEDNN_MARGIN` x torch's.
``sampled``
    Real neighbor sampling (:func:`graphflow.sampling.neighbor.sample_blocks`, fanouts
    [10, 5], 512 seeds, a 60k-node power-law graph) and a two-layer GraphSAGE step on the
    sampled blocks, for each candidate split of the core budget: sampling inline with every
    core training, or ``w`` background workers (:func:`graphflow.sampling.prefetch.prefetch`)
    beside ``t`` training threads.
``walks``
    Skip-gram steps (:class:`graphflow.embeddings.skipgram.SkipGram`, the task's defaults) on
    random walks: ``w`` Hogwild trainers of ``t`` intra-op threads each, for the candidate
    splits (every core one trainer; one trainer with every core; half and half).
``full``
    A full-graph GraphSAGE layer forward and backward with each candidate thread count.
``precision``
    The ``sampled`` workload's training steps in float32 and under bfloat16 autocast,
    alternating, on a CPU that runs bfloat16 natively (AVX512-BF16 or AMX): ``precision =
    "auto"`` trains in ``bf16-mixed`` only where it measured at least :data:`BF16_MARGIN`
    faster (:func:`bf16_choice`).

For the three core workloads a candidate must beat the fixed policy's split
(:func:`graphflow.runtime.cores.policy`) by :data:`CORES_MARGIN` to replace it, so that noise does
not flip a choice. The whole calibration takes a few seconds (:func:`calibrate` reports it).

**The cache.** One JSON file per *signature*: the CPU (model name, vendor, family / model,
the ISA flags that choose kernels: avx2, fma, avx512*, amx*, *bf16*, vnni), the cores this
process may use, the versions of torch, MKL, oneDNN, DGL and Numba, and the environment caps
(``ONEDNN_MAX_CPU_ISA``, ``DNNL_MAX_CPU_ISA``, ``ATEN_CPU_CAPABILITY``, torch's CPU
capability). The file lives in ``$GRAPHFLOW_CACHE_DIR``, else ``$XDG_CACHE_HOME/graphflow``,
else ``~/.cache/graphflow``, named ``calibration-<hash of the signature>.json``. Core
choices are stored per core budget (``[pipeline] cores``). Writes are atomic
(:mod:`graphflow.io.atomic`); a file that does not parse, or holds another signature, is
ignored with one warning and rewritten. The dense-product table is kept per intra-op thread
count (``gemm-t<threads>``): a stage whose core plan gives it fewer threads than the process
has looks up, or measures, the table for its own count (:func:`graphflow.sparse.gemm.backend_for`).

**A busy machine.** Other jobs make a two-thread OpenMP team many times slower than one thread,
so a part measured while the load average was above half the cores (:data:`BUSY_FRACTION`)
is not kept as it is: the measurement is stored with ``busy: true`` beside the fixed rules
(torch's products, the core policy), which are what runs use until it is measured again, at
the first use when the load is no longer above half the cores, or after :data:`BUSY_REUSES`
uses whatever the load. One
``graphflow: warning:`` line a process says so.

**Modes** (``GRAPHFLOW_CALIBRATE``, or ``graphflow doctor --calibrate``): ``auto`` (default:
the cache, else measure and cache), ``force`` (measure again and rewrite the cache; once per
process), ``off`` (measure nothing: the fixed rules, :func:`fallback_gemm` and the core
policy). Explicit options always win: ``[pipeline] gemm = "torch"`` / ``"onednn"``,
``[train.cores]``, a component's ``workers``.

**Determinism.** Calibration changes which kernels run, not what they compute: sampling
inline or in workers yields the same batches, and both dense backends compute in float32.
But MKL and oneDNN sum in different orders, so their results differ in the last bits; a seed
repeats a run exactly for the same recorded choices (``run.json``'s ``calibration`` and
``gemm``), which the cache keeps stable on a machine. ``gemm = "torch"`` (or ``"onednn"``)
pins the backend for bit-for-bit repeats across machines and recalibrations.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import random
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch

from graphflow.errors import ConfigError, did_you_mean
from graphflow.io.atomic import write_json

ENV_DIR = "GRAPHFLOW_CACHE_DIR"
"""Environment variable naming the cache folder (default: XDG's cache folder / graphflow)."""
ENV_MODE = "GRAPHFLOW_CALIBRATE"
"""Environment variable: ``auto`` (default), ``force`` or ``off``."""
MODES: tuple[str, ...] = ("auto", "force", "off")
FORMAT = 2
"""Version of the cache file's layout; a file of another version is measured again."""

ENV_CAPS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "OMP_NUM_THREADS",
            "MKL_NUM_THREADS", "MKL_ENABLE_INSTRUCTIONS")
"""Environment variables that cap the kernels or threads the libraries use."""

ONEDNN_MARGIN = 0.95
"""oneDNN is chosen for a shape bucket only when its median time is below this x torch's."""
CORES_MARGIN = 0.93
"""A measured core split replaces the fixed policy's only when this much faster (x time)."""
SLOW = 2.0
"""A core split this many times slower than the best after one round gets no second round."""
BUSY_FRACTION = 0.5
"""A measurement is "busy" when the load average exceeds this x the usable cores: one other
busy process on a 2-core machine already turned a two-thread team's times upside down."""
BUSY_REUSES = 3
"""A part measured on a busy machine is measured again after this many uses, even if the
machine is still busy (meanwhile runs use the fixed rules)."""

GEMM_SHAPES: dict[str, tuple[int, int, int]] = {
    "large-wide": (4096, 256, 256),     # a sampled SAGE batch's first layers
    "large-narrow": (4096, 1024, 16),   # a full graph's input layer into few classes
    "small-wide": (1024, 128, 128),
    "small-narrow": (1024, 512, 16),    # a sampled batch's output layer
}
"""One representative ``(M, K, N)`` product per bucket of :func:`graphflow.sparse.gemm.bucket`."""

_WHAT = {"gemm": "dense-product backends", "cores": "core splits",
         "precision": "bfloat16 against float32 training steps"}
BF16_MARGIN = 0.9
"""``precision = "auto"`` picks bfloat16 only where its steps measured below this x float32's."""
_lock = threading.RLock()
_memo: dict[tuple[str, str], dict[str, Any]] = {}  # (cache file, part) -> measured entry
_forced: set[tuple[str, str]] = set()  # parts already re-measured under mode "force"
_warned: set[str] = set()


# ----------------------------------------------------------------------------- signature


def cpu_info() -> dict[str, Any]:
    """The CPU as the kernels see it: model name, vendor, family / model, the ISA flags that
    pick kernels, and the cores this process may run on."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    flags = fields.get("flags", "").split()
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return {"model_name": fields.get("model name") or platform.processor() or platform.machine(),
            "vendor": fields.get("vendor_id", ""), "family": fields.get("cpu family", ""),
            "model": fields.get("model", ""), "isa": isa_flags(flags), "cores": cores,
            "machine": platform.machine()}


def isa_flags(flags: list[str]) -> list[str]:
    """The flags among ``flags`` that decide which kernels run: avx2, fma, avx512*, amx*,
    anything with bf16 or vnni (sorted)."""
    keep = {f for f in flags if f in ("avx", "avx2", "fma", "f16c") or f.startswith(
        ("avx512", "amx")) or "bf16" in f or "vnni" in f}
    return sorted(keep)


def library_versions() -> dict[str, str | None]:
    """torch, MKL, oneDNN (as built into torch), DGL and Numba versions; None when absent."""
    config = torch.__config__.show()
    mkl = re.search(r"Math Kernel Library Version ([^\s]+)", config)
    onednn = re.search(r"MKL-DNN v([^\s]+)", config)
    found: dict[str, str | None] = {}
    for name in ("dgl", "numba"):  # numba: the CPU sampler's compiled kernels
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return {"torch": torch.__version__, "mkl": mkl.group(1) if mkl else None,
            "onednn": onednn.group(1) if onednn else None, "dgl": found["dgl"],
            "numba": found["numba"], "python": platform.python_version()}


def env_caps() -> dict[str, Any]:
    """The caps in effect: the environment variables of :data:`ENV_CAPS` that are set,
    torch's CPU capability (what ``ATEN_CPU_CAPABILITY`` left it) and its thread count."""
    caps: dict[str, Any] = {name: os.environ[name] for name in ENV_CAPS if name in os.environ}
    try:
        caps["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    except AttributeError:
        caps["torch_cpu_capability"] = None
    caps["torch_threads"] = torch.get_num_threads()
    return caps


def signature() -> dict[str, Any]:
    """What the cached choices are valid for (see the module docstring). The thread count is
    left out: core choices are stored per budget inside the file."""
    caps = {k: v for k, v in env_caps().items() if k not in ("torch_threads", "OMP_NUM_THREADS",
                                                             "MKL_NUM_THREADS")}
    return {"cpu": cpu_info(), "versions": library_versions(), "caps": caps}


def signature_key(sig: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(sig, sort_keys=True).encode()).hexdigest()[:16]


def cache_dir() -> Path:
    """``$GRAPHFLOW_CACHE_DIR``, else ``$XDG_CACHE_HOME/graphflow``, else ``~/.cache/graphflow``."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "graphflow"


def cache_path(sig: Mapping[str, Any] | None = None) -> Path:
    return cache_dir() / f"calibration-{signature_key(sig or signature())}.json"


def mode(value: str | None = None) -> str:
    """The calibration mode: ``value``, else ``$GRAPHFLOW_CALIBRATE``, else ``auto``."""
    chosen = (value if value is not None else os.environ.get(ENV_MODE, "auto")).strip().lower()
    if chosen not in MODES:
        raise ConfigError(f'{ENV_MODE}="{chosen}": expected auto, force or off'
                          f'{did_you_mean(chosen, MODES)}; set one of them or unset it')
    return chosen


# ----------------------------------------------------------------------------- the cache


def _read(path: Path, sig: Mapping[str, Any]) -> dict[str, Any]:
    """The cache file's content, or {} when absent; a corrupt or foreign file warns once."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        _warn(path, f"cannot read it ({exc.strerror or exc})")
        return {}
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("another format")
        if data.get("signature") != json.loads(json.dumps(sig)):
            raise ValueError("another machine's signature")
        return data
    except ValueError as exc:
        _warn(path, f"ignored ({exc}); it will be measured again and rewritten")
        return {}


def _warn(path: Path, what: str) -> None:
    _say(str(path), f"calibration cache {path}: {what}")


def _say(key: str, line: str) -> None:
    """Print ``graphflow: warning: <line>`` on stderr once per process and ``key``, from one
    process of a data-parallel run (rank 0)."""
    if key in _warned:
        return
    _warned.add(key)
    if os.environ.get("RANK", "0") == "0":
        print(f"graphflow: warning: {line}", file=sys.stderr, flush=True)


def _write(path: Path, sig: Mapping[str, Any], part: str, entry: dict[str, Any]) -> bool:
    """Merge ``entry`` into the cache file (atomically); False when it cannot be written."""
    data = _read(path, sig) or {"format": FORMAT, "signature": sig}
    data[part] = entry
    try:
        write_json(path, data)
        return True
    except Exception as exc:  # a read-only home: measure every time, say so once
        _warn(path, f"cannot be written ({exc}); choices are measured in every process")
        return False


def _get(part: str, measure: Callable[[], dict[str, Any]], how: str | None) -> dict[str, Any]:
    """The cached ``part`` or a fresh measurement of it, with ``source`` and ``path`` added
    (a busy measurement's choices replaced by the fixed rules: :func:`_held`)."""
    chosen = mode(how)
    sig = signature()
    path = cache_path(sig)
    memo_key = (str(path), part)
    with _lock:
        if chosen == "force" and memo_key not in _forced:
            _forced.add(memo_key)
            _memo.pop(memo_key, None)
        elif memo_key in _memo:
            return _held(part, {**_memo[memo_key], "source": "cache"})
        found = _read(path, sig).get(part) if chosen == "auto" else None
        if found is not None and not _valid(part, found):
            _warn(path, f"ignored its {part} entry (not what this version writes); it will be "
                        f"measured again and rewritten")
            found = None
        if found is not None and found.get("busy"):
            uses = int(found.get("uses", 0)) + 1
            if uses >= BUSY_REUSES or not _busy(_load(), BUSY_FRACTION):
                found = None  # a busy measurement is redone: now quiet, or used long enough
            else:
                found = {**found, "uses": uses}
                _write(path, sig, part, found)
        if found is not None:
            _memo[memo_key] = {**found, "path": str(path)}
            return _held(part, {**found, "source": "cache", "path": str(path)})
        what = _WHAT.get(part.split('-')[0], part)
        print(f"graphflow: measuring this machine's {what} (once; cached in {path})",
              file=sys.stderr, flush=True)
        t = time.perf_counter()
        with _own_rng():
            entry = measure()
        entry["seconds"] = round(time.perf_counter() - t, 3)
        entry["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        entry["load_average"] = _load()
        if _busy(entry["load_average"], BUSY_FRACTION):
            entry["busy"], entry["uses"] = True, 0
            _say("busy", f"calibration measured on a busy machine (load "
                         f"{entry['load_average']} on {cpu_info()['cores']} cores): runs use "
                         f"the fixed rules until it is measured again, when the load falls "
                         f"below half the cores or after {BUSY_REUSES} runs")
        written = _write(path, sig, part, entry)
        _memo[memo_key] = {**entry, "path": str(path) if written else None}
        return _held(part, {**entry, "source": "calibrated",
                            "path": str(path) if written else None})


@contextmanager
def _own_rng() -> Iterator[None]:
    """Leave the process's random state as it was: the benchmarks seed and draw from torch's
    global generator (``torch.manual_seed``, module initialisation), and a measurement runs
    after the run is seeded, only in the runs that measure (cache miss, a busy entry redone,
    each data-parallel rank on its own), so without this the model's initial weights and
    dropout masks would depend on whether this run measured."""
    py, np_state = random.getstate(), np.random.get_state()
    with torch.random.fork_rng(devices=[]):
        try:
            yield
        finally:
            random.setstate(py)
            np.random.set_state(np_state)


def _held(part: str, entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` as runs apply it: a busy measurement's choices give way to the fixed rules
    (torch's products; the core policy, ``plans`` empty), kept under ``measured``."""
    if not entry.get("busy"):
        return entry
    what = "buckets" if part.startswith("gemm") else "bf16" if part.startswith(
        "precision") else "plans"
    fixed = fallback_gemm() if what == "buckets" else False if what == "bf16" else {}
    return {**entry, what: fixed, "measured": entry.get(what)}


def _load() -> float | None:
    """The 1-minute load average while measuring (a busy machine skews the choices)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _valid(part: str, entry: Any) -> bool:
    """Whether a cached entry has the shape :func:`measure_gemm` / :func:`measure_cores` give."""
    from graphflow.sparse import gemm

    if not isinstance(entry, dict):
        return False
    if part.startswith("precision"):
        return isinstance(entry.get("bf16"), bool)
    if part.startswith("gemm"):
        buckets = entry.get("buckets")
        return (isinstance(buckets, dict) and set(buckets) == set(gemm.BUCKETS)
                and all(v in ("onednn", "torch") for v in buckets.values()))
    plans = entry.get("plans")
    least = {"threads": 1, "workers": 0, "worker_threads": 1}
    return isinstance(plans, dict) and all(
        isinstance(p, dict) and all(isinstance(p.get(k), int) and p[k] >= n
                                    for k, n in least.items())
        for p in plans.values())


def _busy(load: float | None, fraction: float = 1.0) -> bool:
    """Whether ``load`` exceeds ``fraction`` x this machine's usable cores."""
    return load is not None and load > fraction * cpu_info()["cores"]


def forget() -> None:
    """Drop what this process remembers of the cache (the files stay)."""
    from graphflow.sparse import gemm

    with _lock:
        _memo.clear()
        _forced.clear()
        _warned.clear()
    gemm.forget()


# ----------------------------------------------------------------------------- gemm


def fallback_gemm() -> dict[str, str]:
    """The fixed rule when nothing measured applies: torch (MKL) for every bucket. oneDNN
    won on some CPUs and lost by 1.1-2.8x on others, so no CPU gets it unmeasured."""
    from graphflow.sparse import gemm

    return dict.fromkeys(gemm.BUCKETS, "torch")


def gemm_choices(how: str | None = None, *, threads: int | None = None) -> dict[str, Any]:
    """``{"buckets": {bucket: backend}, "ms": {...}, "source": ...}`` for this machine with
    ``threads`` intra-op threads (default: torch's now), each count its own cache entry."""
    from graphflow.sparse import gemm

    if mode(how) == "off":
        return {"buckets": fallback_gemm(), "source": "off"}
    if not gemm.onednn_available():
        return {"buckets": dict.fromkeys(gemm.BUCKETS, "torch"), "source": "no oneDNN"}
    threads = threads or torch.get_num_threads()
    return _get(f"gemm-t{threads}", lambda: _measure_gemm_with(threads), how)


def _measure_gemm_with(threads: int) -> dict[str, Any]:
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return measure_gemm()
    finally:
        torch.set_num_threads(before)


@torch.enable_grad()  # the first product may come from a no_grad caller (inference)
def measure_gemm(reps: int = 4) -> dict[str, Any]:
    """Time each bucket's representative product with both backends (see the docstring)."""
    from graphflow.sparse import gemm

    gen = torch.Generator().manual_seed(0)
    buckets: dict[str, str] = {}
    ms: dict[str, dict[str, float]] = {}
    for name, (m, k, n) in GEMM_SHAPES.items():
        assert gemm.bucket(m, k, n) == name, (name, gemm.bucket(m, k, n))
        weight = torch.randn(n, k, generator=gen).div_(k ** 0.5).requires_grad_()
        bias = torch.zeros(n, requires_grad=True)
        xs = [torch.randn(int(m * (0.95 + 0.1 * i / reps)), k, generator=gen).requires_grad_()
              for i in range(reps + 1)]
        grads = [torch.randn(x.shape[0], n, generator=gen) for x in xs]
        times: dict[str, list[float]] = {"torch": [], "onednn": []}
        for i, (x, dy) in enumerate(zip(xs, grads)):
            for backend in (("torch", "onednn") if i % 2 == 0 else ("onednn", "torch")):
                with gemm.applied(backend):
                    t = time.perf_counter()
                    gemm.linear(x, weight, bias).backward(dy)
                    elapsed = time.perf_counter() - t
                if i:  # the first call of each builds its kernels
                    times[backend].append(elapsed)
        best = {b: min(v) * 1e3 for b, v in times.items()}  # the least disturbed call
        ms[name] = {b: round(v, 3) for b, v in best.items()}
        buckets[name] = "onednn" if best["onednn"] < ONEDNN_MARGIN * best["torch"] else "torch"
    return {"buckets": buckets, "ms": ms, "shapes": {k: list(v) for k, v in GEMM_SHAPES.items()},
            "threads": torch.get_num_threads()}


# ----------------------------------------------------------------------------- cores


def core_choices(budget: int, how: str | None = None) -> dict[str, Any]:
    """``{"plans": {workload: {"threads", "workers", "worker_threads"}}, "ms": ..., "source"}``
    measured for a budget of ``budget`` cores (``plans`` empty when calibration is off)."""
    if mode(how) == "off":
        return {"plans": {}, "source": "off"}
    return _get(f"cores-{budget}", lambda: measure_cores(budget), how)


def _candidates(workload: str, budget: int) -> list[tuple[int, int, int]]:
    """(workers, threads, worker_threads) splits to try, the policy's first."""
    from graphflow.runtime import cores

    base = cores.policy(workload, budget)
    found = [(base.workers, base.threads, base.worker_threads)]
    if workload == "full":
        found += [(0, t, 1) for t in sorted({1, max(1, budget // 2)}) if t != budget]
    elif workload == "sampled":
        found += [(0, budget, 1), (1, budget, 1), (1, max(1, budget - 1), 1)]
        if budget >= 8:
            found.append((2, budget - 2, 1))
    else:  # walks: (trainers, -, intra-op threads per trainer)
        found += [(budget, 1, 1), (1, budget, budget)]
        if budget >= 4:
            found.append((budget // 2, 1, 2))
    return list(dict.fromkeys(found))


def _pick(workload: str, budget: int, seconds: dict[tuple[int, int, int], float]
          ) -> dict[str, int]:
    candidates = list(seconds)
    policy_key = candidates[0]
    best = min(candidates, key=seconds.get)
    if seconds[best] > CORES_MARGIN * seconds[policy_key]:
        best = policy_key
    workers, threads, worker_threads = best
    return {"workers": workers, "threads": threads, "worker_threads": worker_threads}


def measure_cores(budget: int, rounds: int = 2) -> dict[str, Any]:
    """Time every candidate split of ``budget`` cores for each workload, alternating the
    candidates ``rounds`` times and keeping each one's best round. The dense products run on
    torch (MKL) here, so that measuring the splits never waits for the gemm calibration."""
    from graphflow.sparse import gemm

    with gemm.applied("torch"):
        return _measure_cores(budget, rounds)


def _measure_cores(budget: int, rounds: int) -> dict[str, Any]:
    before = torch.get_num_threads()
    plans: dict[str, dict[str, int]] = {}
    ms: dict[str, dict[str, float]] = {}
    try:
        for workload, bench in (("sampled", _SampledBench()), ("walks", _WalksBench()),
                                ("full", _FullBench())):
            cands = _candidates(workload, budget)
            best = dict.fromkeys(cands, float("inf"))
            bench.run(*cands[0])  # warm-up: first-call costs
            for r in range(rounds):
                for cand in (cands if r % 2 == 0 else cands[::-1]):
                    if r and best[cand] > SLOW * min(best.values()):
                        continue  # clearly slower: not worth a second round
                    best[cand] = min(best[cand], bench.run(*cand))
            plans[workload] = _pick(workload, budget, best)
            ms[workload] = {f"workers={w},threads={t},worker_threads={wt}": round(s * 1e3, 2)
                            for (w, t, wt), s in best.items()}
    finally:
        torch.set_num_threads(before)
    return {"plans": plans, "ms": ms, "budget": budget}


class _SampledBench:
    """Sampled GraphSAGE batches: real sampling and feature gather, then a two-layer step."""

    def __init__(self, nodes: int = 60_000, edges: int = 1_200_000, batches: int = 6,
                 batch: int = 512, features: int = 100, hidden: int = 128):
        from graphflow.io.synthetic import rmat
        from graphflow.nn import SAGEConv
        from graphflow.sampling.csc import CSCGraph

        g = rmat(nodes, edges, seed=0)
        order = torch.argsort(g.dst, stable=True)
        indptr = torch.zeros(nodes + 1, dtype=torch.int64)
        indptr[1:] = torch.cumsum(torch.bincount(g.dst, minlength=nodes), 0)
        self.csc = CSCGraph(indptr=indptr, indices=g.src[order], eids=order)
        gen = torch.Generator().manual_seed(1)
        self.x = torch.randn(nodes, features, generator=gen)
        self.y = torch.randint(0, 16, (nodes,), generator=gen)
        perm = torch.randperm(nodes, generator=gen)
        self.seeds = [perm[i * batch:(i + 1) * batch] for i in range(batches)]
        torch.manual_seed(0)
        self.layers = torch.nn.ModuleList([SAGEConv(features, hidden), SAGEConv(hidden, 16)])
        self.opt = torch.optim.SGD(self.layers.parameters(), lr=0.0)

    def produce(self, seeds: torch.Tensor, in_worker: bool) -> tuple[Any, Any, Any]:
        from graphflow.sampling import native
        from graphflow.sampling.neighbor import sample_blocks

        if in_worker:
            torch.set_num_threads(1)  # this worker's OS thread only
        # The compiled picks on a worker's own thread, or inline on the training threads, as
        # MinibatchSampler.iterate runs them.
        with native.threads(1 if in_worker else torch.get_num_threads()):
            blocks = sample_blocks(self.csc, seeds, [10, 5],
                                   generator=torch.Generator().manual_seed(int(seeds[0])))
        return blocks, self.x[blocks[0].src_nodes], self.y[seeds]

    def run(self, workers: int, threads: int, worker_threads: int,
            dtype: torch.dtype | None = None) -> float:
        from graphflow.sampling.prefetch import prefetch
        from graphflow.sparse import Adjacency

        torch.set_num_threads(threads)
        t = time.perf_counter()
        for blocks, x, y in prefetch(lambda s: self.produce(s, workers > 0), self.seeds,
                                     depth=1, workers=workers):
            h = x
            with torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
                for i, (layer, b) in enumerate(zip(self.layers, blocks)):
                    h = layer(Adjacency.from_block(b), h)
                    if i == 0:
                        h = torch.relu(h)
            loss = torch.nn.functional.cross_entropy(h.float(), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return time.perf_counter() - t


class _WalksBench:
    """Skip-gram steps on random walks (the ``skipgram`` task's defaults, 64 walks a step)."""

    def __init__(self, nodes: int = 20_000, walks: int = 256, length: int = 40):
        from graphflow.embeddings.skipgram import SkipGram, SkipGramSettings

        gen = torch.Generator().manual_seed(2)
        self.walks = torch.randint(0, nodes, (walks, length + 1), generator=gen)
        self.model = SkipGram(nodes, SkipGramSettings(init_hops=0), torch.ones(nodes),
                              torch.device("cpu"), gen)

    def run(self, workers: int, threads: int, worker_threads: int) -> float:
        torch.set_num_threads(threads if workers <= 1 else 1)
        t = time.perf_counter()
        self.model.fit(self.walks, 0.0, 0, 1, 64, workers=workers,
                       worker_threads=worker_threads if workers > 1 else threads)
        return time.perf_counter() - t


class _FullBench:
    """One full-graph GraphSAGE layer, forward and backward, twice."""

    def __init__(self, nodes: int = 20_000, edges: int = 200_000, features: int = 128):
        from graphflow.io.synthetic import rmat
        from graphflow.nn import SAGEConv
        from graphflow.sparse import Adjacency

        g = rmat(nodes, edges, seed=3)
        self.adj = Adjacency.from_edges(g.src, g.dst, nodes, nodes)
        self.x = torch.randn(nodes, features, generator=torch.Generator().manual_seed(3))
        self.layer = SAGEConv(features, features)

    def run(self, workers: int, threads: int, worker_threads: int) -> float:
        torch.set_num_threads(threads)
        t = time.perf_counter()
        self.layer(self.adj, self.x).square().mean().backward()
        return time.perf_counter() - t


# ----------------------------------------------------------------------------- precision


def bf16_choice(budget: int, how: str | None = None, *,
                native: bool | None = None) -> dict[str, Any]:
    """``{"bf16": bool, "ms": {"fp32", "bf16"}, "source", ...}``: whether bfloat16 autocast
    trains faster than float32 on this CPU with ``budget`` threads (measured once, cached).
    ``native`` (default: the CPU flags) False answers False without measuring: bfloat16
    emulated in float32 is never faster."""
    if native is None:
        flags = cpu_info()["isa"]
        native = any(f in flags for f in ("avx512_bf16", "amx_bf16"))
    if not native:
        return {"bf16": False, "source": "no native bfloat16"}
    if mode(how) == "off":
        return {"bf16": False, "source": "off"}
    return _get(f"precision-{budget}", lambda: measure_precision(budget), how)


def measure_precision(budget: int, rounds: int = 3) -> dict[str, Any]:
    """The ``sampled`` workload's steps in float32 and under bfloat16 autocast, ``rounds``
    alternations, medians; bf16 is chosen below :data:`BF16_MARGIN` x float32."""
    from graphflow.sparse import gemm

    before = torch.get_num_threads()
    bench = _SampledBench(batches=4)
    times: dict[str, list[float]] = {"fp32": [], "bf16": []}
    try:
        with gemm.applied("torch"):
            bench.run(0, budget, 1)  # warm-up: first-call costs
            bench.run(0, budget, 1, torch.bfloat16)
            for r in range(rounds):
                for name in (("fp32", "bf16") if r % 2 == 0 else ("bf16", "fp32")):
                    dtype = torch.bfloat16 if name == "bf16" else None
                    times[name].append(bench.run(0, budget, 1, dtype))
    finally:
        torch.set_num_threads(before)
    ms = {k: round(sorted(v)[len(v) // 2] * 1e3, 2) for k, v in times.items()}
    return {"bf16": ms["bf16"] < BF16_MARGIN * ms["fp32"], "ms": ms, "budget": budget}


# ----------------------------------------------------------------------------- for a run


def for_gemm(choice: str) -> tuple[dict[str, str] | None, dict[str, Any]]:
    """The per-bucket table to apply for ``[pipeline] gemm = choice`` (None: an explicit
    backend, nothing measured) and what ``run.json`` records of it."""
    if choice != "auto":
        return None, {"source": "override", "requested": choice}
    try:
        found = gemm_choices()
    except ConfigError:
        raise
    except Exception as exc:  # measuring must never cost a run: the fixed rule instead
        _say("gemm-failed", f"calibration of the dense products failed ({exc}); using the "
                            f"fixed rule")
        found = {"buckets": fallback_gemm(), "source": f"failed: {type(exc).__name__}"}
    return dict(found["buckets"]), _record(found, "buckets")


def for_cores(budget: int) -> tuple[dict[str, dict[str, int]], dict[str, Any]]:
    """The measured core splits for ``budget`` cores ({} when off) and their record."""
    try:
        found = core_choices(budget)
    except ConfigError:
        raise
    except Exception as exc:
        _say("cores-failed", f"calibration of the core splits failed ({exc}); using the "
                             f"policy")
        found = {"plans": {}, "source": f"failed: {type(exc).__name__}"}
    return dict(found.get("plans", {})), _record(found, "plans")


def _record(found: Mapping[str, Any], what: str) -> dict[str, Any]:
    keep = (what, "source", "path", "ms", "measured_at", "seconds", "load_average", "budget",
            "threads", "busy", "uses", "measured")
    return {k: found[k] for k in keep if k in found}


# ----------------------------------------------------------------------------- reports


def report(budget: int | None = None, how: str | None = None) -> dict[str, Any]:
    """Everything measured for this machine, as ``graphflow doctor`` and the benchmarks
    show it: the signature's key and file, the gemm buckets and the core plans."""
    budget = budget or max(1, torch.get_num_threads())
    sig = signature()
    return {"mode": mode(how), "key": signature_key(sig), "cache": str(cache_path(sig)),
            "gemm": gemm_choices(how), "cores": core_choices(budget, how)}


def summary(calibration: Mapping[str, Any]) -> str:
    """One line per part, for a console."""
    gemm_part, cores_part = calibration["gemm"], calibration["cores"]
    buckets = ", ".join(f"{k} {v}" for k, v in gemm_part["buckets"].items())
    plans = "; ".join(f"{w}: {p['workers']} workers x {p['worker_threads']} + {p['threads']} "
                      f"threads" for w, p in cores_part.get("plans", {}).items()) or "the policy"
    return (f"dense products ({gemm_part['source']}): {buckets}\n"
            f"core splits, {cores_part.get('budget', '?')} cores ({cores_part['source']}): "
            f"{plans}")


if __name__ == "__main__":  # python -m graphflow.runtime.calibrate: measure now and print
    os.environ.setdefault(ENV_MODE, "force")
    print(json.dumps(report(), indent=2))
    sys.exit(0)
