import platform
import resource

import pytest
import torch

from graphflow.runtime import allocator

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")


def faults_of_fresh_blocks(rounds: int = 8, nbytes: int = 40 * 2**20) -> int:
    """Minor page faults of allocating, touching and freeing a 40 MiB block ``rounds`` times
    (a batch's gathered features): every round faults it in again when malloc hands the
    block back to the kernel, none when the block is kept."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(rounds):
        block = torch.empty(nbytes // 4, dtype=torch.float32)
        block.fill_(1.0)
        del block
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@glibc
def test_retain_keeps_freed_batch_sized_blocks():
    record = allocator.apply("retain")
    assert record == {"allocator": "retain", "libc": "glibc",
                      "mmap_threshold": allocator.MMAP_THRESHOLD,
                      "trim_threshold": allocator.TRIM_THRESHOLD}
    assert allocator.apply("retain") is record  # once per process
    faults_of_fresh_blocks()  # the first rounds grow the heap
    pages = 40 * 2**20 // resource.getpagesize()
    # 40 MiB is above glibc's largest dynamic mmap threshold (32 MiB): without the setting
    # each of the 8 rounds would fault all of its pages in again. With it, at most one round
    # does (the kernel's proactive reclaim, e.g. DAMON, may take back a kept block once).
    assert faults_of_fresh_blocks() < 2 * pages


def test_system_changes_nothing_and_says_so():
    record = allocator.apply("system")
    assert record["allocator"] == "system"
    assert "retained_before" in record
