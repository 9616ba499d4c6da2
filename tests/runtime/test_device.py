import pytest
import torch

from graphflow.runtime.device import resolve_device, same_device
from graphflow.errors import DeviceError


def test_auto_and_cpu():
    assert resolve_device("cpu") == torch.device("cpu")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on CPU-only machines")
def test_cuda_without_cuda_is_a_clear_error():
    with pytest.raises(DeviceError) as err:
        resolve_device("cuda:0")
    msg = str(err.value)
    assert msg.startswith('device "cuda:0" requested but CUDA is not available')
    assert 'use device = "cpu" or "auto"' in msg


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_index_out_of_range():
    n = torch.cuda.device_count()
    with pytest.raises(DeviceError, match=f"this machine has {n} CUDA device"):
        resolve_device(f"cuda:{n}")


def test_unknown_device():
    with pytest.raises(DeviceError, match='unknown device "tpu"'):
        resolve_device("tpu")


def test_same_device():
    same_device(torch.zeros(1), torch.device("cpu"), what="features")
    with pytest.raises(DeviceError, match=r"features is on cpu but cuda:0 was expected; "
                                          r"move it with .to\('cuda:0'\)"):
        same_device(torch.zeros(1), torch.device("cuda:0"), what="features")
