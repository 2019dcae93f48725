"""The benchmark matrix: bytes, floors and which bar applies to each shape."""

import pytest

from validation.bench.shapes import MATRIX, SPEEDUP_SHAPES, select


@pytest.mark.parametrize(
    "name, mb, size_class",
    [
        ("seed-qwen0.5b-2k", 1.05, "small"),
        ("llama8b-b1-4k", 16.78, "medium"),
        ("llama8b-b1-32k", 134.22, "large"),
        ("llama8b-b1-128k", 536.87, "large"),
        ("llama8b-b8-8k", 268.44, "large"),
        ("llama8b-b64-2k", 536.87, "large"),
        ("h24kv4d256-b1-20k", 84.74, "medium"),
        ("llama70b-tp8-b4-32k", 67.11, "medium"),
        ("h24kv4d256-b1-20k-r16", 84.74, "medium"),
    ],
)
def test_kv_bytes_and_bar_of_each_shape(name, mb, size_class):
    (shape,) = select([name])
    assert shape.kv_mb == pytest.approx(mb, abs=0.01)
    assert shape.size_class == size_class


def test_floor_at_the_read_ceiling():
    (shape,) = select(["llama8b-b1-32k"])
    assert shape.floor_us(4.58) == pytest.approx(29.3, abs=0.05)


def test_only_shapes_under_64_mb_run_with_a_warm_l2():
    assert {s.name for s in MATRIX if s.warm_l2} == {"seed-qwen0.5b-2k", "llama8b-b1-4k"}


def test_speedup_shapes_are_in_the_matrix():
    assert set(SPEEDUP_SHAPES) <= {s.name for s in MATRIX}


def test_unknown_shape_names_are_refused():
    with pytest.raises(ValueError, match=r"unknown shape\(s\) \['nope'\]"):
        select(["nope"])
