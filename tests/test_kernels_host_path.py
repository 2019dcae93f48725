"""The host path of the entry points: validation and launch configuration happen once per
call signature; later calls with the same signature only launch."""

import pytest
import torch

import kernels
from kernels import LayerWorkspace
from kernels.decode_attention import api, launcher
from validation.anchors import bytes_equal
from validation.bench.host_overhead import stubbed_kernels


def inputs(batch=2, hq=4, hkv=2, d=64, s=40, page=8, dtype=torch.float16):
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(batch, hq, d, generator=gen).to(dtype)
    k = torch.randn(batch, hkv, s, d, generator=gen).to(dtype)
    v = torch.randn(batch, hkv, s, d, generator=gen).to(dtype)
    pages = torch.randn(batch * s // page, hkv, page, d, generator=gen).to(dtype)
    table = torch.arange(batch * s // page, dtype=torch.int32).view(batch, -1)
    visible = torch.tensor([s, s // 2], dtype=torch.int32)[:batch]
    return q, k, v, pages, table, visible


ENTRIES = {
    "single": lambda x, out, ws: kernels.attention_decode(x[0], x[1], x[2], x[5], out=out),
    "paged": lambda x, out, ws: kernels.attention_decode_paged(x[0], x[3], x[3], x[4], x[5], out=out),
    "split": lambda x, out, ws: kernels.attention_decode_splitkv(x[0], x[1], x[2], x[5], num_splits=3,
                                                                 workspace=ws, out=out),
    "paged-split": lambda x, out, ws: kernels.attention_decode_paged_splitkv(x[0], x[3], x[3], x[4], x[5],
                                                                             num_splits=3, workspace=ws, out=out),
}


@pytest.fixture
def counted_checks(monkeypatch):
    calls = []
    original = api.check_inputs

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(api, "check_inputs", counting)
    monkeypatch.setattr(api, "_PLANS", {})
    return calls


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_a_second_call_with_the_same_signature_does_no_validation_work(entry, counted_checks):
    x = inputs()
    ws = LayerWorkspace(2, 1, 4, 64, 3, "cpu")
    out = torch.empty_like(x[0])
    with stubbed_kernels():
        for _ in range(3):
            ENTRIES[entry](x, out, ws)
    assert len(counted_checks) == 1, "validated once, then launched from the cached plan"


def test_another_signature_is_validated_again(counted_checks):
    x = inputs()
    with stubbed_kernels():
        kernels.attention_decode(x[0], x[1], x[2], x[5])
        kernels.attention_decode(x[0], x[1][:, :, :32], x[2][:, :, :32], x[5])  # other strides and shape
        kernels.attention_decode(x[0].float().half(), x[1], x[2], x[5])  # same signature, other tensors
    assert len(counted_checks) == 2


def test_a_cached_signature_still_rejects_bad_input(counted_checks):
    x = inputs()
    with stubbed_kernels():
        kernels.attention_decode(x[0], x[1], x[2], x[5])
        with pytest.raises(ValueError, match="visible_tokens must be int32"):
            kernels.attention_decode(x[0], x[1], x[2], x[5].long())
        with pytest.raises(ValueError, match="visible_tokens must be a torch.Tensor, got list"):
            kernels.attention_decode(x[0], x[1], x[2], [5, 3])
        with pytest.raises(ValueError, match="scale must be a Python float or None, got bool"):
            kernels.attention_decode(x[0], x[1], x[2], x[5], scale=True)


def test_cached_plans_compute_the_same_bits_as_fresh_ones(monkeypatch):
    x = inputs()
    ws = LayerWorkspace(2, 1, 4, 64, 3, "cpu")
    for entry in sorted(ENTRIES):
        monkeypatch.setattr(api, "_PLANS", {})
        fresh = ENTRIES[entry](x, torch.full_like(x[0], float("nan")), ws)
        again = ENTRIES[entry](x, torch.full_like(x[0], float("nan")), ws)
        assert len(api._PLANS) == 1 and bytes_equal(again, fresh), entry


def test_a_patched_launch_config_is_a_new_plan(launch_config, counted_checks):
    x = inputs()
    with stubbed_kernels():
        kernels.attention_decode(x[0], x[1], x[2], x[5])
        launch_config(block_n=16)
        kernels.attention_decode(x[0], x[1], x[2], x[5])
    assert len(counted_checks) == 2


class FakeCompiled:
    """Mimics Triton's CompiledKernel: `run` is a property over the launcher `_run`."""

    def __init__(self, log):
        self.function, self.packed_metadata, self._run = object(), object(), lambda *a: log.append(("launch", a))

    @property
    def run(self):
        return self._run


class FakeParam:
    def __init__(self, constexpr):
        self.is_constexpr = constexpr


class FakeKernel:
    """Mimics a JITFunction launching through `compiled.run(grid, stream, ..., *all arguments)`."""

    arg_names = ["a", "b", "n", "BLOCK"]
    params = [FakeParam(False), FakeParam(False), FakeParam(False), FakeParam(True)]

    def __init__(self):
        self.log = []
        self.compiled = FakeCompiled(self.log)
        self.binds = 0

    trailing = ("BLOCK",)  # the parameters passed by keyword, in the order the launcher receives them

    def __getitem__(self, grid):
        def call(*args, **options):
            self.binds += 1
            g = tuple(grid) + (1,) * (3 - len(grid))
            self.compiled.run(*g, "stream", self.compiled.function, self.compiled.packed_metadata, None, None, None,
                              *args, *(options[name] for name in self.trailing))
            return self.compiled
        return call


def test_the_direct_launch_replays_the_recorded_call_with_new_tensors(monkeypatch):
    monkeypatch.setattr(launcher, "stream_source", lambda: ((lambda device: "stream"), 0))
    kernel = FakeKernel()
    launch = launcher.KernelLaunch(kernel, (4, 2), ("a", "b"), (0, 1), (7,), {"BLOCK": 16, "num_warps": 4},
                                   direct=True)
    first, second = ("A1", "B1"), ("A2", "B2")
    launch(first)
    assert launch.is_direct and kernel.binds == 2  # one launch, one recording (which launched nothing)
    launch(second)
    assert kernel.binds == 2, "the second call skipped Triton's binding"
    assert [entry[1][9:] for entry in kernel.log] == [("A1", "B1", 7, 16), ("A2", "B2", 7, 16)]


def test_the_direct_launch_is_off_with_the_environment_switch(monkeypatch):
    monkeypatch.setenv(launcher.FAST_LAUNCH_ENV, "0")
    kernel = FakeKernel()
    launch = launcher.KernelLaunch(kernel, (1,), ("a", "b"), (0, 1), (7,), {"BLOCK": 16}, direct=True)
    launch(("A", "B"))
    launch(("A", "B"))
    assert not launch.is_direct and kernel.binds == 2


def test_an_unexpected_launcher_layout_keeps_tritons_path(monkeypatch):
    kernel = FakeKernel()
    kernel.arg_names = ["a", "b", "n", "BLOCK", "EXTRA"]
    kernel.params = kernel.params + [FakeParam(True)]
    launch = launcher.KernelLaunch(kernel, (1,), ("a", "b"), (0, 1), (7,), {"BLOCK": 16}, direct=True)
    launch(("A", "B"))
    assert not launch.is_direct


class FakeKernelWithTrailingTensor(FakeKernel):
    """A kernel that gained a tensor parameter `s` at the end of its signature (filled by keyword)."""

    arg_names = ["a", "b", "n", "BLOCK", "s"]
    params = [FakeParam(False), FakeParam(False), FakeParam(False), FakeParam(True), FakeParam(False)]
    trailing = ("BLOCK", "s")


def test_the_direct_launch_replays_keyword_tensors_too(monkeypatch):
    monkeypatch.setattr(launcher, "stream_source", lambda: ((lambda device: "stream"), 0))
    kernel = FakeKernelWithTrailingTensor()
    launch = launcher.KernelLaunch(kernel, (1,), ("a", "b"), (0, 1), (7,), {"BLOCK": 16}, direct=True,
                                   keyword_tensors={"s": 2})
    launch(("A1", "B1", "S1"))
    assert launch.is_direct
    launch(("A2", "B2", "S2"))
    assert kernel.binds == 2, "the second call skipped Triton's binding"
    assert [entry[1][9:] for entry in kernel.log] == [("A1", "B1", 7, 16, "S1"), ("A2", "B2", 7, 16, "S2")]
