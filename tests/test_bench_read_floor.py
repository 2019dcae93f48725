"""The read-floor probe: which read-kernel shapes it tries, and how its table reads."""

from validation.bench.read_floor import DEFAULT_READ, READ_SHAPES, label, main, table


def test_the_probe_tries_the_benchmarks_own_read_kernel_among_others():
    assert DEFAULT_READ in READ_SHAPES
    assert len(set(READ_SHAPES)) == len(READ_SHAPES) > 10
    assert label((4096, 16, 8)) == "b4096-t16-w8"


def test_the_table_names_the_fastest_read_and_compares_it_with_the_default():
    rows = [dict(shape="s", kv_bytes=134_217_728, read="b4096-t16-w8", default=True, median_us=34.0),
            dict(shape="s", kv_bytes=134_217_728, read="b8192-t4-w16", default=False, median_us=32.3),
            dict(shape="s", kv_bytes=134_217_728, read="b2048-t2-w4", default=False, error="OutOfResources")]
    assert "| s | 134.2 | 34.00 | 32.30 | b8192-t4-w16 | 0.950 |" in table(rows)


def test_a_shape_with_no_timed_read_shows_dashes():
    rows = [dict(shape="s", kv_bytes=2_000_000, read="b4096-t16-w8", default=True, error="RuntimeError: x")]
    assert "| s | 2.0 | - | - | - | - |" in table(rows)


def test_an_unknown_shape_is_refused_before_anything_runs(tmp_path, capsys):
    assert main(["--out", str(tmp_path / "r.json"), "--shapes", "no-such-shape"]) == 2
    assert "unknown shape" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
