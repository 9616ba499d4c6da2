"""The DGL compat module: GraphBolt stub, import errors that say what to do."""

import inspect
import subprocess
import sys
import textwrap

import torch

from graphflow.compat import dgl as compat


def test_dgl_core_works_through_compat():
    dgl = compat.dgl
    g = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 2])))
    assert g.num_nodes() == 3 and g.num_edges() == 2
    assert compat.import_dgl() is dgl


def test_graphbolt_stub_matches_the_torch_build():
    dgl_dir = compat._dgl_dir()
    present = compat.graphbolt_library_present(compat._torch_version(), dgl_dir)
    assert compat.graphbolt_is_stubbed() is (not present)


def test_stub_raises_attribute_error_so_inspect_works():
    stub = compat._GraphBoltStub("dgl.graphbolt")
    assert not hasattr(stub, "ItemSampler")
    inspect.getmembers(stub)  # would fail if __getattr__ raised ImportError
    try:
        stub.ItemSampler
    except AttributeError as exc:
        assert "dgl.graphbolt.ItemSampler is unavailable" in str(exc)
    else:
        raise AssertionError("stub attribute access must raise AttributeError")


def test_library_detection(tmp_path):
    (tmp_path / "graphbolt").mkdir()
    (tmp_path / "graphbolt" / "libgraphbolt_pytorch_2.2.1.so").touch()
    assert compat.graphbolt_library_present("2.2.1", tmp_path)
    assert not compat.graphbolt_library_present("2.13.0", tmp_path)
    assert not compat.graphbolt_library_present("2.2.1", tmp_path / "missing")


def run_isolated(prelude: str) -> subprocess.CompletedProcess:
    code = textwrap.dedent(prelude) + textwrap.dedent("""
        from graphflow.errors import EnvironmentProblem
        try:
            import graphflow.compat.dgl
        except EnvironmentProblem as exc:
            print("MESSAGE:", exc)
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_broken_dgl_gives_one_actionable_line():
    proc = run_isolated("""
        import sys
        sys.modules["dgl"] = None  # any `import dgl` now raises ImportError
    """)
    line = proc.stdout.strip()
    assert line.startswith("MESSAGE: DGL 2.1.0 failed to import with torch"), proc.stderr
    assert 'pip install "dgl==2.1.0" "torchdata<0.10"' in line
    assert "\n" not in line


def test_missing_dgl_says_what_to_install():
    proc = run_isolated("""
        from importlib import metadata
        real = metadata.distribution
        def distribution(name):
            if name == "dgl":
                raise metadata.PackageNotFoundError(name)
            return real(name)
        metadata.distribution = distribution
    """)
    assert proc.stdout.strip().startswith("MESSAGE: DGL is not installed; install"), proc.stderr


def test_only_the_compat_module_imports_dgl():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = []
    for path in [*root.glob("graphflow/**/*.py"), *root.glob("plugins/**/*.py"),
                 *root.glob("benchmarks/*.py"), *root.glob("examples/**/*.py")]:
        if path.name == "dgl.py" and path.parent.name == "compat":
            continue
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith(("import dgl", "from dgl")):
                offenders.append(f"{path.relative_to(root)}: {stripped}")
    assert offenders == []


def test_stub_has_the_one_class_distdgl_asks_about():
    stub = compat._GraphBoltStub("dgl.graphbolt")
    assert not isinstance(compat.dgl.graph(([0], [1])), stub.FusedCSCSamplingGraph)
    assert not hasattr(stub, "FusedSamplingGraph")
