"""Bad input to the kernel entry points raises ValueError stating expected vs actual."""

import pytest
import torch

import kernels
from kernels import LayerWorkspace

B, HQ, HKV, D, S = 2, 4, 2, 64, 40


def make(dtype=torch.bfloat16, rows=None, page_size=16):
    q = torch.randn((B, HQ, D) if rows is None else (B, rows, HQ, D)).to(dtype)
    k = torch.randn(B, HKV, S, D).to(dtype)
    pages = torch.randn(8, HKV, page_size, D).to(dtype)
    table = torch.arange(2 * B, dtype=torch.int32).reshape(B, 2)
    visible = torch.tensor([5, 31], dtype=torch.int32)
    return q, k, pages, table, visible


BAD_CONTIGUOUS = {
    "q-float32": (lambda q, k, vis: (q.float(), k, k, vis), "q must be bfloat16 or float16, got torch.float32"),
    "k-dtype": (lambda q, k, vis: (q, k.half(), k, vis), "k_cache must have q's dtype torch.bfloat16, got torch.float16"),
    "q-2d": (lambda q, k, vis: (q[0], k, k, vis), "q must be [B, Hq, D] or [B, R, Hq, D], got shape (4, 64)"),
    "rows-17": (lambda q, k, vis: (q.unsqueeze(1).expand(B, 17, HQ, D), k, k, vis), "q rows R must be in 1..16, got 17"),
    "head-dim-60": (lambda q, k, vis: (q[..., :60], k[..., :60], k[..., :60], vis), "head dim D must be a multiple of 8 in 8..256, got 60"),
    "head-dim-mismatch": (lambda q, k, vis: (q, k[..., :56], k[..., :56], vis), "k_cache head dim must equal q's 64, got 56"),
    "v-shape": (lambda q, k, vis: (q, k, k[:, :1], vis), "v_cache must have k_cache's shape (2, 2, 40, 64), got (2, 1, 40, 64)"),
    "heads-not-multiple": (lambda q, k, vis: (q[:, :3], k, k, vis), "multiple of the cache's KV heads 2, got Hq=3"),
    "cache-batch": (lambda q, k, vis: (q, k[:1], k[:1], vis), "k_cache batch must equal q's batch 2, got 1"),
    "q-last-dim-strided": (lambda q, k, vis: (q.transpose(1, 2).contiguous().transpose(1, 2), k, k, vis), "q must have stride 1 in its last dimension"),
    "k-last-dim-strided": (lambda q, k, vis: (q, k.transpose(2, 3).contiguous().transpose(2, 3)[:, :, :, :], k, vis), "k_cache must have stride 1 in its last dimension"),
    "visible-int64": (lambda q, k, vis: (q, k, k, vis.long()), "visible_tokens must be int32, got torch.int64"),
    "visible-shape": (lambda q, k, vis: (q, k, k, vis[:1]), "visible_tokens must have shape (2,), got (1,)"),
    "visible-on-host-list": (lambda q, k, vis: (q, k, k, [5, 31]), "visible_tokens must be a torch.Tensor, got list"),
}


@pytest.mark.parametrize("name", sorted(BAD_CONTIGUOUS))
def test_contiguous_entry_rejects_bad_input(name):
    q, k, _, _, visible = make()
    edit, message = BAD_CONTIGUOUS[name]
    with pytest.raises(ValueError) as info:
        kernels.attention_decode(*edit(q, k, visible))
    assert message in str(info.value)


@pytest.mark.parametrize(
    "num_splits, message",
    [(0, "num_splits must be in 1..256, got 0"), (257, "num_splits must be in 1..256, got 257"), (2.0, "num_splits must be a Python int"), (True, "num_splits must be a Python int")],
    ids=["zero", "too-many", "float", "bool"],
)
def test_split_entry_rejects_num_splits_out_of_range(num_splits, message):
    q, k, _, _, visible = make()
    with pytest.raises(ValueError) as info:
        kernels.attention_decode_splitkv(q, k, k, visible, num_splits=num_splits)
    assert message in str(info.value)


def test_num_splits_is_keyword_only():
    q, k, _, _, visible = make()
    with pytest.raises(TypeError):
        kernels.attention_decode_splitkv(q, k, k, visible, 2)


@pytest.mark.parametrize(
    "field, workspace_args, message",
    [
        ("batch", (1, 1, HQ, D, 4), "batch must be <= 1 (LayerWorkspace max), got 2"),
        ("heads", (B, 1, HQ - 1, D, 4), "num_q_heads must be <= 3 (LayerWorkspace max), got 4"),
        ("head-dim", (B, 1, HQ, 32, 4), "head_dim must be <= 32 (LayerWorkspace max), got 64"),
        ("splits", (B, 1, HQ, D, 2), "num_splits must be <= 2 (LayerWorkspace max), got 4"),
    ],
    ids=lambda v: v if isinstance(v, str) and " " not in v else None,
)
def test_split_entry_rejects_too_small_workspace(field, workspace_args, message):
    q, k, _, _, visible = make()
    workspace = LayerWorkspace(*workspace_args, device=q.device)
    with pytest.raises(ValueError) as info:
        kernels.attention_decode_splitkv(q, k, k, visible, num_splits=4, workspace=workspace)
    assert message in str(info.value)


def test_split_entry_rejects_rows_beyond_workspace():
    q, k, _, _, visible = make(rows=3)
    workspace = LayerWorkspace(B, 2, HQ, D, 4, q.device)
    with pytest.raises(ValueError, match=r"rows must be <= 2 \(LayerWorkspace max\), got 3"):
        kernels.attention_decode_splitkv(q, k, k, visible, num_splits=4, workspace=workspace)


@pytest.mark.parametrize(
    "name, edit, message",
    [
        ("table-int64", lambda t: t.long(), "block_table must be int32, got torch.int64"),
        ("table-1d", lambda t: t.flatten(), "block_table must be [B=2, max_blocks >= 1], got shape (4,)"),
        ("table-batch", lambda t: t[:1], "block_table must be [B=2, max_blocks >= 1], got shape (1, 2)"),
    ],
    ids=lambda v: v if isinstance(v, str) and " " not in v else None,
)
def test_paged_entry_rejects_bad_block_table(name, edit, message):
    q, _, pages, table, visible = make()
    with pytest.raises(ValueError) as info:
        kernels.attention_decode_paged(q, pages, pages, edit(table), visible)
    assert message in str(info.value)


def test_paged_entry_rejects_block_size_not_power_of_two():
    q, _, pages, table, visible = make(page_size=12)
    with pytest.raises(ValueError, match="block size \\(k_cache.shape\\[2\\]\\) must be a power of two, got 12"):
        kernels.attention_decode_paged_splitkv(q, pages, pages, table, visible, num_splits=2)


@pytest.mark.parametrize(
    "name, out, message",
    [
        ("dtype", lambda q: torch.empty_like(q, dtype=torch.float16), "out must have q's dtype torch.bfloat16, got torch.float16"),
        ("shape", lambda q: torch.empty_like(q)[:1], "out must have q's shape (2, 4, 64), got (1, 4, 64)"),
        ("not-a-tensor", lambda q: [0.0], "out must be a torch.Tensor, got list"),
    ],
    ids=lambda v: v if isinstance(v, str) and " " not in v else None,
)
def test_out_buffer_is_checked(name, out, message):
    q, k, _, _, visible = make()
    with pytest.raises(ValueError) as info:
        kernels.attention_decode(q, k, k, visible, out=out(q))
    assert message in str(info.value)


@pytest.mark.parametrize("scale, message", [(0.0, "positive finite"), (float("nan"), "positive finite"), ("0.1", "Python float")], ids=["zero", "nan", "str"])
def test_scale_is_checked(scale, message):
    q, k, _, _, visible = make()
    with pytest.raises(ValueError, match=message):
        kernels.attention_decode(q, k, k, visible, scale=scale)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="mixing devices needs a GPU")
def test_devices_must_match():
    q, k, _, _, visible = make()
    with pytest.raises(ValueError, match="must be on q's device"):
        kernels.attention_decode(q.cuda(), k.cuda(), k.cuda(), visible)
