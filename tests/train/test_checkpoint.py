"""Checkpoint files: atomic round trip, random-generator state, clear errors."""

import pytest
import torch

from graphflow.errors import DataError
from graphflow.train import checkpoint as ckpt
from graphflow.train.checkpoint import Best, TrainState


def test_train_state_round_trip(tmp_path):
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.ones(4, 3)).sum().backward()
    opt.step()
    best = Best()
    assert best.update(0.5, 3, model) and not best.update(0.4, 4, model)
    gen = torch.Generator().manual_seed(7)
    state = TrainState(epoch=4, model=model.state_dict(), optimizer=opt.state_dict(), best=best,
                       rng=ckpt.rng_state(gen), meta={"model": {"type": "gcn"}})
    path = ckpt.save(tmp_path / "train_state.pt", state.to_dict())
    assert [p.name for p in tmp_path.iterdir()] == ["train_state.pt"]  # no temporary left
    expected = (torch.rand(3), torch.rand(3, generator=gen))

    back = TrainState.from_dict(ckpt.load(path), path=path)
    ckpt.set_rng_state(back.rng, gen)
    assert torch.equal(torch.rand(3), expected[0])
    assert torch.equal(torch.rand(3, generator=gen), expected[1])
    assert back.epoch == 4 and back.best.epoch == 3 and back.best.score == 0.5
    assert back.meta == {"model": {"type": "gcn"}} and not back.stopped
    assert torch.equal(back.best.model["weight"], model.weight.detach())
    opt2 = torch.optim.Adam(torch.nn.Linear(3, 2).parameters(), lr=0.1)
    opt2.load_state_dict(back.optimizer)
    assert opt2.state_dict()["state"][0]["step"] == 1


def test_best_keeps_a_copy_not_a_view():
    model = torch.nn.Linear(2, 1)
    best = Best()
    best.update(1.0, 1, model)
    with torch.no_grad():
        model.weight.add_(1.0)
    assert not torch.equal(best.model["weight"], model.weight)


def test_unreadable_checkpoint_names_the_file(tmp_path):
    bad = tmp_path / "train_state.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(DataError, match=r"cannot read checkpoint .*train_state\.pt.*delete it"):
        ckpt.load(bad)
    with pytest.raises(DataError, match="checkpoint not found"):
        ckpt.load(tmp_path / "missing.pt")
    ckpt.save(bad, {"epoch": 1})
    with pytest.raises(DataError, match="not a graphflow training state"):
        TrainState.from_dict(ckpt.load(bad), path=bad)
