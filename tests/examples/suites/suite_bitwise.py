"""Example bitwise suite: num_splits=1 is byte-identical to the single pass; fingerprints."""

from cases import fingerprint, identity, rows

from examplepkg.ops import single_pass_sum, split_sum


def test_one_split_is_byte_identical_to_single_pass(evidence):
    data = rows()
    single = [single_pass_sum(row) for row in data]
    split = [split_sum(row, 1) for row in data]
    evidence["kind"] = "bitwise"
    evidence["fixtures"]["rows-16x1001-seed20261129"] = identity(data)
    same = fingerprint(single) == fingerprint(split)
    evidence["results"].setdefault("anchors", {})["A1-splits1-vs-single-pass"] = {"passed": same, "cases": len(data)}
    fingerprints = evidence["results"].setdefault("fingerprints", {})
    fingerprints["splits1"] = fingerprint(split)
    fingerprints["splits4"] = fingerprint([split_sum(row, 4) for row in data])
    evidence["results"]["backend"] = "cpu"
    assert same, "split_sum(num_splits=1) differs from single_pass_sum"
