"""Paper-level accuracy on the Planetoid splits (Kipf & Welling 2017; Veličković et al. 2018).

The pipelines are the shipped examples (examples/cora_gcn.toml, examples/citeseer_gat.toml)
with only the dataset, the seed and the output folder overridden, so the examples are what
these figures vouch for. Per-seed figures print with ``pytest -s``.
"""

from pathlib import Path
from statistics import mean

import pytest

from graphflow.config import load_config
from graphflow.manager import create_host
from graphflow.runner import run_pipeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def accuracies(example: str, overrides: list[str], seeds: range, root: Path,
                    out: Path) -> list[float]:
    host = create_host()
    accs = []
    for seed in seeds:
        config = load_config(EXAMPLES / example, host.registry, out_dir=out / str(seed),
                             overrides=[f"load.root={root}", f"pipeline.seed={seed}",
                                        "train.checkpoint=false", *overrides])
        accs.append(run_pipeline(config, host, quiet=True).ctx.metrics["test_acc"])
    print(f"{example} {overrides}: test_acc per seed {[round(a, 4) for a in accs]}, "
          f"mean {mean(accs):.4f}")
    return accs


@pytest.mark.slow
def test_cora_gcn_reaches_the_paper_over_10_seeds(planetoid_root, tmp_path):
    accs = accuracies("cora_gcn.toml", [], range(10), planetoid_root, tmp_path)
    assert mean(accs) >= 0.815, accs


@pytest.mark.slow
def test_citeseer_gcn_reaches_the_paper_over_10_seeds(planetoid_root, tmp_path):
    accs = accuracies("cora_gcn.toml", ["load.name=citeseer"], range(10), planetoid_root,
                           tmp_path)
    assert mean(accs) >= 0.703, accs


@pytest.mark.slow
def test_cora_gat_reaches_the_paper(planetoid_root, tmp_path):
    accs = accuracies("citeseer_gat.toml", ["load.name=cora"], range(3), planetoid_root,
                           tmp_path)
    assert mean(accs) >= 0.83, accs
