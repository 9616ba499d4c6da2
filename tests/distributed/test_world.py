"""World: launcher environment, seed shards, digests, and the data-parallel task check."""

import pytest
import torch

from graphflow.config import load_config
from graphflow.distributed.world import World, check_data_parallel, state_digest
from graphflow.errors import ConfigError

CPU = torch.device("cpu")


def test_no_launcher_environment_is_a_single_process():
    world = World.from_env(CPU, env={})
    assert (world.rank, world.size, world.backend, world.distributed) == (0, 1, None, False)
    assert world.is_main
    assert world.describe() == {"world_size": 1, "backend": None}
    ids = torch.arange(7)
    assert world.shard(ids) is ids
    rows = (torch.randn(3, 2), torch.arange(3))
    assert world.gather(*rows) == rows


def test_torchrun_environment():
    env = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "MASTER_ADDR": "127.0.0.1",
           "MASTER_PORT": "29500"}
    world = World.from_env(CPU, env=env)
    assert (world.rank, world.size, world.local_rank, world.backend) == (3, 4, 1, "gloo")
    assert not world.is_main
    assert world.place(CPU) == CPU


def test_partial_launcher_environment_names_what_is_missing():
    with pytest.raises(ConfigError, match="RANK and WORLD_SIZE are set but not LOCAL_RANK, "
                                          "MASTER_ADDR, MASTER_PORT"):
        World.from_env(CPU, env={"RANK": "0", "WORLD_SIZE": "2"})


def test_shards_are_equal_disjoint_and_cover_every_seed():
    ids = torch.arange(10, 21)  # 11 seeds over 4 ranks: 3 each, one seed repeated
    shards = [World(rank=r, size=4, backend="gloo").shard(ids) for r in range(4)]
    assert [s.numel() for s in shards] == [3, 3, 3, 3]
    together = torch.cat(shards)
    assert set(together.tolist()) == set(ids.tolist())
    assert together.numel() - len(set(together.tolist())) == 1


def test_state_digest_sees_every_value():
    a = {"w": torch.zeros(2, 2), "b": torch.tensor(1.0)}
    b = {"w": torch.zeros(2, 2), "b": torch.tensor(1.0)}
    assert state_digest(a) == state_digest(b)
    b["w"][1, 1] = 1e-7
    assert state_digest(a) != state_digest(b)


def test_tasks_that_cannot_run_data_parallel_are_refused(tmp_path, host):
    path = tmp_path / "walks.toml"
    path.write_text('[load]\ntype = "networkx"\ngraph = "karate_club"\n'
                    '[sample]\ntype = "deepwalk"\n[train]\ntype = "skipgram"\n')
    config = load_config(path, host.registry)
    check_data_parallel(config, 1)
    with pytest.raises(ConfigError) as info:
        check_data_parallel(config, 2)
    # the task's declared line (graphflow.capabilities), as graphflow run and validate say it
    assert str(info.value).startswith("[train] skipgram cannot run data-parallel (--nproc): ")
    assert str(info.value).endswith("; run it without --nproc (or with --nproc 1)")
