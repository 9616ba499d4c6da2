"""Reading a large SMILES table: the ``smiles`` loader on ~41k molecules, cold and warm.

The shared BBBP and Tox21 SMILES (9,870 rows) are repeated up to ``--rows`` (default 41,127,
the size of ``ogbg-molhiv``) into a CSV in a temporary folder, with one target column. The
loader reads it through ``graphflow run``'s own path (a pipeline of one ``[load] type =
"smiles"`` stage, scaffold split, ``workers`` processes) twice with an empty cache folder
(``GRAPHFLOW_CACHE_DIR`` in the temporary folder):

* **cold**: RDKit parses every SMILES (OGB's features and the Bemis-Murcko scaffolds) in the
  worker processes, the arrays are joined and cached;
* **warm**: the same file again: the cached arrays are read back, RDKit parses nothing.

Each figure is the ``load`` stage's seconds in the run's record. The temporary cache folder
would also hold the machine's measured choices (graphflow.runtime.calibrate), which reading
molecules never uses: the script turns measuring off (``GRAPHFLOW_CALIBRATE=off``). A
repeated SMILES is parsed again (the loader does not deduplicate), so the work is that of
41k distinct molecules of the same sizes.

    python benchmarks/molecules_parse.py                    # 41,127 rows, 2 workers
    python benchmarks/molecules_parse.py --rows 100000 --workers 4

The last line is JSON: rows, workers, cold and warm seconds, molecules a second (cold), and
the machine (CPU, cores, load average at the start and the end).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

DATA = REPO.parent / "shared" / "data" / "molecules"
SETS = (("bbbp.csv", "p_np"), ("tox21.csv", "NR-AR"))  # (file, the column kept as target)
ENV = ("GRAPHFLOW_CACHE_DIR", "GRAPHFLOW_CALIBRATE")  # set while it runs, restored after


def write_table(folder: Path, rows: int, data: Path = DATA) -> Path:
    """A CSV of ``rows`` SMILES (BBBP then Tox21, repeated) and one target ``y``."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    smiles, y = [], []
    for name, column in SETS:
        table = pacsv.read_csv(data / name)
        smiles += table.column("smiles").to_pylist()
        y += table.column(column).cast(pa.float64()).to_pylist()
    reps = -(-rows // len(smiles))  # ceil
    out = folder / f"molecules_{rows}.csv"
    pacsv.write_csv(pa.table({"smiles": (smiles * reps)[:rows], "y": (y * reps)[:rows]}), out)
    return out


def load_seconds(table: Path, out_dir: Path, workers: int) -> tuple[float, dict]:
    """The ``load`` stage's seconds of a one-stage pipeline reading ``table``, and its report."""
    from graphflow.config import validate_config
    from graphflow.manager import create_host
    from graphflow.runner import run_pipeline

    host = create_host()
    raw = {"pipeline": {"name": "molecules_parse", "out_dir": str(out_dir), "device": "cpu"},
           "load": {"type": "smiles", "path": str(table), "targets": ["y"],
                    "split": "scaffold", "workers": workers}}
    config = validate_config(raw, host.registry, source=out_dir / "pipeline.toml")
    record = run_pipeline(config, host, quiet=True).record
    stage = next(s for s in record["stages"] if s["section"] == "load")
    return stage["seconds"], record["reports"].get("load", {})


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=41127)
    p.add_argument("--workers", type=int, default=2, help="parsing processes (0: in-process)")
    p.add_argument("--data", type=Path, default=DATA, help="folder of bbbp.csv and tox21.csv")
    a = p.parse_args(argv)
    if not all((a.data / name).is_file() for name, _ in SETS):
        p.error(f"{a.data}: needs bbbp.csv and tox21.csv (the shared molecules folder)")
    load_before = os.getloadavg()
    saved = {k: os.environ.get(k) for k in ENV}
    with tempfile.TemporaryDirectory(prefix="graphflow-parse-") as tmp:
        folder = Path(tmp)
        # an empty cache folder: the first read is cold. It would also hold the machine's
        # measured choices, which reading never uses: measure none, rather than time dense
        # products here
        os.environ.update({"GRAPHFLOW_CACHE_DIR": str(folder / "cache"),
                           "GRAPHFLOW_CALIBRATE": "off"})
        try:
            table = write_table(folder, a.rows, a.data)
            cold, report = load_seconds(table, folder / "cold", a.workers)
            warm, _ = load_seconds(table, folder / "warm", a.workers)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    from benchmarks.machine import describe

    result = {"rows": a.rows, "molecules": report.get("molecules"), "workers": a.workers,
              "cold_s": round(cold, 2), "warm_s": round(warm, 2),
              "molecules_per_s_cold": round(a.rows / cold), "cpus": os.cpu_count(),
              "loadavg_start": [round(x, 2) for x in load_before],
              "loadavg_end": [round(x, 2) for x in os.getloadavg()],
              "machine": describe()}
    print(f"{a.rows} molecules, {a.workers} workers: cold {cold:.1f}s "
          f"({result['molecules_per_s_cold']}/s), warm (cached) {warm:.2f}s; load average "
          f"{load_before[0]:.2f} at the start")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
