"""One pipeline, several seeds: ``[pipeline] seeds = [0, 1, 2]`` or ``graphflow run P.toml
--seeds 0-9``.

Leaderboards (OGB's among them) report the mean and standard deviation of a model over
several seeds. With ``seeds`` the run is that protocol in one command: the pipeline runs once
per seed, one after the other in this process, each an ordinary run (:func:`run_pipeline`,
its ``pipeline.seed`` the seed) with its own folder and record, ``OUT/seed-S/run.json``; the
parent folder ``OUT`` (the pipeline's ``out_dir``, default ``runs/<name>``) gets
``summary.json``, rewritten atomically after every seed::

    {"name": ..., "seeds": [0, 1, 2], "status": "ok", "seconds": ...,
     "runs": [{"seed": 0, "path": ".../seed-0", "status": "ok", "seconds": ...}, ...],
     "metrics": {"test_acc": {"values": [...], "mean": ..., "std": ..., "n": 3}, ...}}

``std`` is the sample standard deviation (``n - 1`` in the denominator, what papers quote;
``None`` for one value). A metric enters with the seeds whose record has it as a finite
number. ``graphflow runs OUT`` lists the seeds' runs side by side.

A failing or interrupted seed stops the series: its record says why, ``summary.json`` keeps
the seeds run so far with ``status`` ``"failed"`` / ``"interrupted"``, and the error goes on
to the caller. Seeds are run in one process, so ``--nproc`` and ``--resume`` are refused.
"""

from __future__ import annotations

import copy
import math
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphflow.config import check_seeds, validate_config
from graphflow.errors import ConfigError
from graphflow.runtime.signals import safe_point

if TYPE_CHECKING:
    from graphflow.config import PipelineConfig
    from graphflow.manager import PluginHost

SUMMARY = "summary.json"


def parse_seeds(text: str) -> list[int]:
    """``--seeds`` text: ``0-9``, ``0,1,2``, ``0-4,10`` (ranges inclusive) -> the seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise ConfigError(f"--seeds {text!r}: {part.strip()!r} is not a seed or a range; "
                              f"write e.g. 0-9 or 0,1,2") from None
        if last < first:
            raise ConfigError(f"--seeds {text!r}: empty range {part.strip()}; write the lower "
                              f"seed first, e.g. {last}-{first}")
        seeds.extend(range(first, last + 1))
    return list(check_seeds(seeds, f"--seeds {text!r}"))


def seed_config(config: PipelineConfig, seed: int, out_dir: Path,
                registry: Any) -> PipelineConfig:
    """``config`` as the one-seed pipeline of ``seed``, writing to ``out_dir``."""
    raw = copy.deepcopy(config.raw)
    pipeline = raw.setdefault("pipeline", {})
    pipeline.pop("seeds", None)
    pipeline["seed"] = seed
    pipeline["out_dir"] = str(out_dir.resolve())
    return validate_config(raw, registry, source=config.source)


def summarize(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each metric's per-seed values, mean, sample std and count, in the runs' metric order."""
    names: list[str] = []
    for r in records:
        names += [k for k in r.get("metrics") or {} if k not in names]
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        values = [float(r["metrics"][name]) for r in records
                  if _is_number((r.get("metrics") or {}).get(name))]
        if not values:
            continue
        out[name] = {"values": values, "mean": statistics.fmean(values),
                     "std": statistics.stdev(values) if len(values) > 1 else None,
                     "n": len(values)}
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def format_summary(metrics: dict[str, dict[str, Any]]) -> list[str]:
    """One line per metric: ``test_acc  0.8123 ± 0.0051  (10 seeds)``."""
    if not metrics:
        return []
    width = max(len(k) for k in metrics)
    lines = []
    for name, m in metrics.items():
        std = "-" if m["std"] is None else f"{m['std']:.4g}"
        lines.append(f"{name.ljust(width)}  {m['mean']:.4g} ± {std}  ({m['n']} seed"
                     f"{'' if m['n'] == 1 else 's'})")
    return lines


def run_seeds(config: PipelineConfig, host: PluginHost, *, quiet: bool = False,
              echo: Callable[[str], Any] = print) -> dict[str, Any]:
    """Run ``config`` once per seed of ``pipeline.seeds``; returns the summary as written."""
    from graphflow.io.atomic import write_json
    from graphflow.runner import default_out_dir, run_pipeline

    seeds = config.settings.seeds
    if not seeds:
        raise ConfigError(f"{config.source}: pipeline.seeds is not set; give seeds = [0, 1, 2] "
                          f"or graphflow run --seeds 0-2")
    root = default_out_dir(config)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create out_dir {root}: {exc.strerror or exc}") from None
    # every seed's pipeline is checked before the first one runs
    configs = [seed_config(config, s, root / f"seed-{s}", host.registry) for s in seeds]
    records: list[tuple[dict[str, Any], Path]] = []  # (run.json, folder) of each seed run
    summary: dict[str, Any] = {"name": config.settings.name, "seeds": list(seeds),
                               "config_hash": config.digest(), "status": "running"}
    start = time.perf_counter()

    def write(status: str) -> None:
        summary.update(status=status, seconds=round(time.perf_counter() - start, 3),
                       runs=[{"seed": r.get("seed"), "path": str(p), "status": r.get("status"),
                              "seconds": r.get("seconds")} for r, p in records],
                       metrics=summarize([r for r, _ in records if r.get("status") == "ok"]))
        write_json(root / SUMMARY, summary)

    for seed, one in zip(seeds, configs):
        folder, began = one.settings.out_dir, time.time()
        try:
            safe_point()  # a signal between two seeds stops the series here
            result = run_pipeline(one, host, quiet=quiet)
        except BaseException as exc:
            record = _read_record(folder, began)  # what the failed run recorded, if it did
            if record is not None:
                records.append((record, folder))
            write("interrupted" if isinstance(exc, KeyboardInterrupt) else "failed")
            raise
        records.append((result.record, folder))
        write("running" if seed != seeds[-1] else "ok")
        if not quiet:
            shown = "  ".join(f"{k}={v:.4g}" for k, v in result.record["metrics"].items()
                              if _is_number(v))
            echo(f"graphflow: seed {seed}: {shown}  ({result.record['seconds']:.1f}s)")
    return summary


def _read_record(folder: Path, since: float) -> dict[str, Any] | None:
    """``folder``'s run.json if written at or after ``since`` (not an earlier run's)."""
    import json

    file = folder / "run.json"
    try:
        if file.stat().st_mtime < since - 1:
            return None
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None
