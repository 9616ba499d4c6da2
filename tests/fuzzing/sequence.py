"""The cases of a fuzz chunk as a pure function of (component, seed, size), and fingerprints.

A chunk is hypothesis's ``generate`` phase over one strategy with a fixed seed, no example
database and ``size`` examples: the same arguments give the same cases, byte for byte (the
strategies put no wall-clock time, process id or temporary path into their bytes). Case
``i`` of a chunk is therefore replayed by generating the chunk again and running only case
``i``; its fingerprint ``COMPONENT:SEED:SIZE:INDEX:DIGEST`` carries all of that, and the
digest of its bytes checks that the replay met the same input.
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


def generate(component: str, seed: int, size: int,
             visit: Callable[[int, Case], None]) -> None:
    """Draw the ``size`` cases of chunk ``(component, seed)`` in order and call
    ``visit(index, case)`` on each (it may skip cases: generation does not depend on what
    ``visit`` does, as long as it returns)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    index = 0

    @hseed(seed)
    @settings(max_examples=size, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=STRATEGIES[component]())
    def each(case: Case) -> None:
        nonlocal index
        visit(index, case)
        index += 1

    each()


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
    found: list[Case] = []

    def visit(index: int, case: Case) -> None:  # the rest are drawn too: an exception
        if index == fingerprint.index:          # would make hypothesis replay the case
            found.append(case)

    generate(fingerprint.component, fingerprint.seed, fingerprint.size, visit)
    if not found:
        raise ValueError(f"chunk {fingerprint.component}:{fingerprint.seed} of "
                         f"{fingerprint.size} has no case {fingerprint.index}")
    if digest(found[0]) != fingerprint.digest:
        raise ValueError(f"case {fingerprint.index} of chunk {fingerprint.component}:"
                         f"{fingerprint.seed} now has digest {digest(found[0])}, not "
                         f"{fingerprint.digest}: the strategies or hypothesis changed")
    return found[0]
