"""Run a fuzz case in-process and check the property (see :mod:`fuzzing`)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from fuzzing.case import Case

TIME_BOUND = 20.0
"""Seconds one case may take before it counts as a hang."""

_PLUGIN_CRASH = re.compile(r" failed in stage \S+ \(")


class Hang(BaseException):
    """Raised by the alarm when a case runs past its time bound (not an ``Exception``, so
    that graphflow's own handlers let it through)."""


@dataclass
class Outcome:
    """What one run did, and which parts of the property it broke (``problems``)."""

    case: Case
    code: int | None
    stdout: str
    stderr: str
    seconds: float
    hung: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def traceback(self) -> bool:
        return any(p.startswith(("traceback", "internal error", "plugin crash"))
                   for p in self.problems)

    def report(self) -> str:
        return (f"{'; '.join(self.problems)}\n  exit {self.code} after {self.seconds:.2f}s\n"
                f"  stderr: {self.stderr.strip()[-1500:]}\n  {self.case.describe()}")


def run_case(case: Case, folder: Path, *, bound: float = TIME_BOUND) -> Outcome:
    """Write ``case`` into ``folder`` (fresh), run ``graphflow run`` on it in-process with
    stdout and stderr captured and an alarm at ``bound`` seconds, and check the property."""
    pipeline = case.write(folder)
    before = {p for p in folder.rglob("*")}
    out_dir = folder / "out"
    argv = ["run", str(pipeline), "--out-dir", str(out_dir), "--quiet",
            *(f"--set={o}" for o in case.overrides)]
    from graphflow.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    hung = False
    code: int | None = None
    previous = signal.signal(signal.SIGALRM, _alarm)
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, bound)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse
                code = int(exc.code or 0) if not isinstance(exc.code, str) else 2
    except Hang:
        hung = True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - start
    outcome = Outcome(case=case, code=code, stdout=out.getvalue(), stderr=err.getvalue(),
                      seconds=seconds, hung=hung or seconds > bound)
    outcome.problems = problems(outcome, folder, before, out_dir)
    return outcome


def _alarm(signum: int, frame: object) -> None:
    raise Hang()


def problems(o: Outcome, folder: Path, before: set[Path], out_dir: Path) -> list[str]:
    """Every way in which ``o`` breaks the property (empty: it holds)."""
    found: list[str] = []
    if o.hung:
        return [f"hang: still running after {o.seconds:.1f}s"]
    err = o.stderr
    if "Traceback (most recent call last)" in err:
        found.append("traceback on stderr")
    errors = [line for line in err.split("\n") if line.startswith("graphflow: error: ")]
    if "graphflow: internal error" in err:
        found.append("internal error: " + _line(err, "graphflow: internal error"))
    elif o.code == 1:
        if len(errors) != 1:
            found.append(f"exit 1 with {len(errors)} 'graphflow: error:' lines")
        else:
            message = errors[0][len("graphflow: error: "):]
            extra = [line for line in err.split("\n")
                     if line.strip() and not line.startswith("graphflow: ")]
            if extra:
                found.append(f"more than one line on stderr: {extra[0][:200]}")
            if _PLUGIN_CRASH.search(message):
                found.append("plugin crash: " + message[:300])
            elif o.case.names and not names_one(message, o.case.names):
                found.append(f"message names none of {list(o.case.names)[:6]}: {message[:300]}")
    elif o.code != 0:
        found.append(f"exit status {o.code} (expected 0 or 1)")
    found += _check_outputs(o, folder, before, out_dir)
    return found


_PIPELINE_PREFIX = re.compile(r"^\S*pipeline\.toml(?P<line>:\d+)?: *")


def names_one(message: str, names: tuple[str, ...]) -> bool:
    """Whether ``message`` names one of ``names`` as a word (case-insensitive), once the
    pipeline file's path that starts every configuration error is taken off: that prefix
    alone names nothing. A place in the file (``pipeline.toml:LINE:``, ``(at line 4, column
    17)``, ``(at end of document)``: a TOML syntax error) is enough."""
    match = _PIPELINE_PREFIX.match(message)
    if match and match.group("line"):
        return True
    rest = message[match.end():] if match else message
    if match and re.search(r"\bline \d+|\bend of document\b", rest):
        return True
    return any(re.search(_word(n), rest, re.I) for n in names if n)


def _word(name: str) -> str:
    """``name`` as a regex that does not match inside a longer word (``nodes`` is not in
    ``num_nodes``); a name that starts or ends with a non-word character (``nodes.``)
    needs no boundary on that side."""
    left = r"(?<!\w)" if re.match(r"\w", name[0]) else ""
    right = r"(?!\w)" if re.match(r"\w", name[-1]) else ""
    return left + re.escape(name) + right


def _line(text: str, start: str) -> str:
    return next((line for line in text.split("\n") if line.startswith(start)), "")[:300]


def _check_outputs(o: Outcome, folder: Path, before: set[Path], out_dir: Path) -> list[str]:
    """Anything written needs a complete run.json beside it; no temporary file may remain."""
    written = [p for p in folder.rglob("*") if p.is_file() and p not in before
               and "cache" not in p.relative_to(folder).parts]
    found = [f"temporary file left: {p.name}" for p in written if p.name.endswith(".partial")]
    record_path = out_dir / "run.json"
    if not written:
        if o.code == 0:
            found.append("exit 0 without run.json")
        return found
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        others = ", ".join(sorted(p.name for p in written)[:5])
        return found + [f"outputs ({others}) without a complete run.json "
                        f"({type(exc).__name__})"]
    status = record.get("status")
    if o.code == 0:
        if status != "ok":
            found.append(f"exit 0 but run.json status {status!r}")
        missing = [x["path"] for x in record.get("outputs", []) if not Path(x["path"]).exists()]
        if missing:
            found.append(f"run.json lists missing outputs: {missing[:3]}")
    elif status != "failed":
        found.append(f"exit {o.code} but run.json status {status!r}")
    return found
