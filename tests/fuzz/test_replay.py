"""Fuzz inputs are a pure function of the seed; a printed fingerprint replays one case; a
native crash or hang is counted against its case and the chunk goes on; the property's
"names the file, section or key" cannot be met by the pipeline path alone."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fuzzing import STRATEGIES
from fuzzing.check import names_one
from fuzzing.sequence import Fingerprint, digest, find, generate

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "fuzz.py"


def _bench():
    spec = importlib.util.spec_from_file_location("fuzz_benchmark", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LISTED = [*((component, 7, 12) for component in sorted(STRATEGIES)), ("dgl", 4000, 10),
          ("synthetic", 1, 4)]
"""The chunks (component, seed, size) the tests below list."""

LIST_CHUNKS = textwrap.dedent("""
    import contextlib, io, json, runpy, sys
    bench, chunks = sys.argv[1], json.loads(sys.argv[2])
    sys.path[0] = bench.rpartition("/")[0]  # as when the script runs: its folder first
    listed = {}
    for component, seed, size in chunks:
        # the script as __main__, as on its command line: hypothesis mixes the constants of
        # every local module loaded (the script's too) into what it draws
        sys.argv = [bench, "--list", component, "--seed", str(seed), "--size", str(size)]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                runpy.run_path(bench, run_name="__main__")
            except SystemExit as exc:
                assert not exc.code, (component, seed, size, exc.code)
        listed[f"{component}:{seed}:{size}"] = out.getvalue().split()
    print(json.dumps(listed))
""")


def _list_in_a_process(chunks: list[tuple[str, int, int]]) -> dict[str, list[str]]:
    """``python benchmarks/fuzz.py --list COMPONENT --seed S --size N`` for each chunk, in
    order, in one fresh process (most of a listing's time is importing all of graphflow,
    which one process does once)."""
    proc = subprocess.run([sys.executable, "-c", LIST_CHUNKS, str(BENCH), json.dumps(chunks)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def listings() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Two processes (other pids, temporary folders and wall-clock seconds) list every chunk
    of ``LISTED``, the second in the reverse order (so each chunk follows other draws)."""
    first = _list_in_a_process(LISTED)
    time.sleep(1.1)  # savemat's "Created on" has one-second resolution
    second = _list_in_a_process(LISTED[::-1])
    return first, second


def _listing(listings, component: str, seed: int, size: int) -> list[str]:
    return listings[0][f"{component}:{seed}:{size}"]


@pytest.mark.parametrize("component", sorted(STRATEGIES))
def test_two_runs_with_one_seed_draw_byte_identical_inputs(component, listings):
    """Two processes (other pids, temporary folders and wall-clock seconds) list the same
    fingerprints, whose digests cover every byte of every input."""
    first, second = (listed[f"{component}:7:12"] for listed in listings)
    assert len(first) == 12 and first == second


def test_a_fingerprint_replays_its_case_byte_for_byte():
    cases = []
    generate("mat", 3, 10, lambda i, case: cases.append(case))
    fp = Fingerprint("mat", 3, 10, 7, digest(cases[7]))
    again = find(Fingerprint.parse(str(fp)))
    assert again.files == cases[7].files and again.pipeline == cases[7].pipeline
    with pytest.raises(ValueError, match=r"now has digest .* not 0000"):
        find(Fingerprint("mat", 3, 10, 7, "0000"))


def test_replay_runs_the_case_and_says_whether_the_property_holds(tmp_path, listings):
    fingerprint = _listing(listings, "synthetic", 1, 4)[2]
    proc = subprocess.run([sys.executable, str(BENCH), "--replay", fingerprint, "--keep",
                           str(tmp_path / "case")], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert f"replaying {fingerprint}" in proc.stdout
    assert "property holds" in proc.stdout and proc.returncode == 0, proc.stdout
    assert (tmp_path / "case" / "pipeline.toml").is_file()


FAKE_CHUNK = textwrap.dedent("""
    import json, os, signal, sys, time
    size, skip, log, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    with open(log, "a") as out:
        for i in range(skip, size):
            out.write(json.dumps({"start": i, "digest": f"d{i}"}) + "\\n"); out.flush()
            if i == 1 and mode == "hang":
                signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM, signal.SIGTERM])
                time.sleep(600)  # as if stuck in native code: the alarm cannot reach it
            if i == 1 and mode == "crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            out.write(json.dumps({"index": i, "digest": f"d{i}", "code": 1, "hung": False,
                                  "traceback": False, "problems": [], "report": ""}) + "\\n")
""")


@pytest.mark.parametrize("mode", ["hang", "crash"])
def test_a_native_hang_or_crash_counts_against_its_case_and_the_chunk_goes_on(
        mode, tmp_path, monkeypatch):
    bench = _bench()
    script = tmp_path / "chunk.py"
    script.write_text(FAKE_CHUNK)
    monkeypatch.setattr(bench, "HANG_GRACE", 1.0)
    monkeypatch.setattr(bench, "chunk_argv", lambda component, size, seed, skip, bound, log: [
        sys.executable, str(script), str(size), str(skip), str(log), mode])
    start = time.monotonic()
    result = bench.run_chunk("mat", 4, 9, bound=0.5)
    assert time.monotonic() - start < 60
    stats = result["stats"]
    assert stats["tried"] == 4 and stats["failed"] == 1
    assert stats.get("hangs" if mode == "hang" else "crashes") == 1
    assert stats.get("exit_1") == 3  # cases 0, 2 and 3 ran: the chunk went on after case 1
    (report,) = result["reports"]
    assert report.startswith("hang (killed after 2s)" if mode == "hang" else "crash (exit -11)")
    assert "fingerprint mat:9:4:1:d1: python benchmarks/fuzz.py --replay mat:9:4:1:d1" in report


@pytest.mark.parametrize("message, names, named", [
    ("/x/pipeline.toml: load.nodes: 2 is out of range", ("load",), True),
    ("/x/pipeline.toml: expected a table", ("pipeline", "load"), False),  # the path only
    ("/x/pipeline.toml:3: not UTF-8 text", ("load",), True),
    ("/x/pipeline.toml: invalid TOML: bad escape (at line 4, column 17)", ("load",), True),
    ("[export.0] parquet: no 'predictions' artifact", ("export",), True),
    ("num_nodes must be positive", ("nodes",), False),  # not inside a longer word
    ("/x/nodes.csv:2: bad id", ("nodes.",), True),
])
def test_a_message_must_name_more_than_the_pipeline_file(message, names, named):
    assert names_one(message, names) is named


def test_a_run_draws_what_a_listing_draws(listings):
    """Running cases (which imports more of graphflow, takes time, seeds the RNGs) does not
    change the inputs drawn after them: a run's fingerprints replay."""
    result = _bench().run_chunk("dgl", 10, 4000, 20.0)
    assert result["stats"]["tried"] == 10
    assert sorted(result["fingerprints"]) == sorted(_listing(listings, "dgl", 4000, 10))
