"""The cases of a fuzz chunk as a pure function of (component, seed, size), and fingerprints.

Case ``i`` of chunk ``(component, seed)`` is drawn by hypothesis under a seed of its own,
derived from the three (:func:`draw_one`): the same arguments give the same case, byte for
byte (the strategies put no wall-clock time, process id or temporary path into their
bytes), whatever ran before it and however long that took. A case is replayed from its
fingerprint ``COMPONENT:SEED:SIZE:INDEX:DIGEST`` alone; the digest of its bytes checks
that the replay met the same input.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from fuzzing import STRATEGIES
from fuzzing.case import Case


def digest(case: Case) -> str:
    """A digest of what the case feeds graphflow (files, pipeline, overrides)."""
    h = hashlib.sha256(case.component.encode())
    for name, data in sorted(case.files.items()):
        h.update(b"\0file\0" + name.encode() + b"\0" + data)
    h.update(b"\0pipeline\0" + case.pipeline)
    for override in case.overrides:
        h.update(b"\0set\0" + override.encode("utf-8", errors="surrogatepass"))
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Fingerprint:
    """Where a case sits in its chunk, and the digest of its bytes."""

    component: str
    seed: int
    size: int
    index: int
    digest: str

    def __str__(self) -> str:
        return f"{self.component}:{self.seed}:{self.size}:{self.index}:{self.digest}"

    @classmethod
    def parse(cls, text: str) -> Fingerprint:
        try:
            component, seed, size, index, key = text.strip().split(":")
            return cls(component, int(seed), int(size), int(index), key)
        except ValueError:
            raise ValueError(f"not a fuzz fingerprint (COMPONENT:SEED:SIZE:INDEX:DIGEST): "
                             f"{text!r}") from None


_IMPORTED = False


def import_all() -> None:
    """Import every graphflow module up front. Hypothesis mixes the constants it finds in
    the local modules loaded so far (graphflow's, an editable install) into what it draws,
    so a case drawn after a run had imported more of graphflow came out other than the same
    case drawn in a fresh process."""
    global _IMPORTED
    if _IMPORTED:
        return
    _IMPORTED = True
    import importlib
    import pkgutil

    import graphflow
    import graphflow_plugins

    for package in (graphflow, graphflow_plugins):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):  # runs the CLI
                continue
            try:
                importlib.import_module(info.name)
            except Exception:  # noqa: BLE001 (optional extras: not there, not local)
                pass


def draw_one(component: str, seed: int, index: int) -> Case:
    """Case ``index`` of chunk ``(component, seed)``: hypothesis's first random example under
    a seed of its own (a digest of the three), so that no case depends on the ones before it
    nor on how long they took (hypothesis's engine adapts a long run to what it has seen)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    import_all()
    own = int.from_bytes(hashlib.sha256(f"{component}:{seed}:{index}".encode()).digest()[:8],
                         "little")
    drawn: list[Case] = []

    @hseed(own)
    @settings(max_examples=2, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=STRATEGIES[component]())
    def each(case: Case) -> None:  # the first example is the simplest; the second is random
        drawn.append(case)

    each()
    return drawn[-1]


def generate(component: str, seed: int, size: int,
             visit: Callable[[int, Case], None]) -> None:
    """Draw the ``size`` cases of chunk ``(component, seed)`` in order and call
    ``visit(index, case)`` on each (:func:`draw_one`)."""
    for index in range(size):
        visit(index, draw_one(component, seed, index))


@contextlib.contextmanager
def same_random_state() -> Iterator[None]:
    """Run a case without it moving the global RNGs (Python's, NumPy's, torch's): a pipeline
    seeds them, and the strategies drawn after it must not see that (a chunk that ran its
    cases would otherwise draw other inputs than one that only lists them)."""
    import random

    import numpy as np
    import torch

    states = random.getstate(), np.random.get_state(), torch.random.get_rng_state()
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.random.set_rng_state(states[2])


def find(fingerprint: Fingerprint) -> Case:
    """The case ``fingerprint`` points to, generated again; ``ValueError`` when its bytes
    differ from the digest (the strategies or hypothesis changed since)."""
    if not 0 <= fingerprint.index < fingerprint.size:
        raise ValueError(f"chunk {fingerprint.component}:{fingerprint.seed} of "
                         f"{fingerprint.size} has no case {fingerprint.index}")
    case = draw_one(fingerprint.component, fingerprint.seed, fingerprint.index)
    if digest(case) != fingerprint.digest:
        raise ValueError(f"case {fingerprint.index} of chunk {fingerprint.component}:"
                         f"{fingerprint.seed} now has digest {digest(case)}, not "
                         f"{fingerprint.digest}: the strategies or hypothesis changed")
    return case
