"""Packing rules of the packed-launch prototype, on the CPU (`pytest lab/host_path/test_packed_launch.py`)."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from lab.host_path.packed_launch import Refused, kernel_spec, parameter_word


class FakeTensor:
    def __init__(self, ptr):
        self.ptr = ptr

    def data_ptr(self):
        return self.ptr


def recorded_launch(signature, template, slots, *, pdl=False, scratch=0, ctas=1, function=0xF00D):
    """A `KernelLaunch` stand-in whose direct replay closes over what launcher._direct_launch records."""
    run = SimpleNamespace(launch_pdl=pdl, launch_cooperative_grid=False, global_scratch_size=scratch,
                          profile_scratch_size=0)
    packed, g0, g1, g2 = (4, ctas, 1024), 8, 2, 1
    metadata = enter_hook = exit_hook = get_stream = device = None

    def launch(tensors):  # the names launcher._direct_launch's replay closes over
        return (template, slots, run, function, packed, g0, g1, g2, metadata, enter_hook, exit_hook, get_stream,
                device, tensors)

    compiled = SimpleNamespace(function=function, src=SimpleNamespace(signature=signature))
    kernel = SimpleNamespace(device_caches={0: ({"key": compiled}, None)})
    return SimpleNamespace(direct=launch, kernel=kernel)


def test_words_follow_the_launchers_widths():
    assert parameter_word("i32", -1) == 0xFFFFFFFF
    assert parameter_word("i64", -1) == 0xFFFFFFFFFFFFFFFF
    assert parameter_word("i1", True) == 1
    assert parameter_word("fp32", 0.5) == struct.unpack("<I", struct.pack("<f", 0.5))[0]
    assert parameter_word("bf16", 1.0) == 0x3F80  # the fp32 bits' upper half
    assert parameter_word("fp16", 1.0) == 0x3C00
    assert parameter_word("*bf16", FakeTensor(0x7000)) == 0x7000
    assert parameter_word("*i32", None) == 0


def test_an_integer_that_does_not_fit_is_an_error():
    with pytest.raises(struct.error):
        parameter_word("i32", 2**31)


def test_a_spec_skips_constexprs_and_ends_with_the_scratch_pointers():
    kl = recorded_launch({"q": "*bf16", "n": "i32", "BLOCK": "constexpr", "scale": "fp32", "out": "*bf16"},
                         [FakeTensor(16), 7, 64, 0.5, FakeTensor(32)], [(0, 0), (4, 5)], pdl=True)
    spec = kernel_spec(kl)
    assert spec["words"] == [0, 7, parameter_word("fp32", 0.5), 0, 0, 0]
    assert spec["slots"] == [(0, 0), (3, 5)]
    assert spec["grid"] == [8, 2, 1] and spec["num_warps"] == 4 and spec["shared"] == 1024 and spec["pdl"]


@pytest.mark.parametrize("change, reason", [
    (dict(scratch=256), "scratch"),
    (dict(ctas=2), "clusters"),
    (dict(function=0xBEEF), "function handle"),
])
def test_what_the_packed_launch_cannot_reproduce_is_refused(change, reason):
    kl = recorded_launch({"q": "*bf16", "n": "i32"}, [FakeTensor(16), 7], [(0, 0)], **change)
    if "function" in change:  # the recorded handle is not the compiled kernel's
        kl.kernel.device_caches[0][0]["key"].function = 0xF00D
    with pytest.raises(Refused, match=reason):
        kernel_spec(kl)


def test_a_recording_longer_than_the_signature_is_refused():
    kl = recorded_launch({"q": "*bf16"}, [FakeTensor(16), 7], [(0, 0)])
    with pytest.raises(Refused, match="signature"):
        kernel_spec(kl)


def test_an_argument_outside_its_type_is_refused():
    kl = recorded_launch({"q": "*bf16", "n": "i32"}, [FakeTensor(16), 2**40], [(0, 0)])
    with pytest.raises(Refused, match="argument 1"):
        kernel_spec(kl)
