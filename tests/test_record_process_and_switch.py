"""Record keys the configuration and G5 read: `process` and `api.switch`."""

from __future__ import annotations

import pytest

from gates.model.schemas import validate

API = {"packages": ["kernels"], "default_route_unchanged": True}


def api_errors(**api):
    return [e for e in validate("record", {"api": {**API, **api}}) if e.path[:1] == ("api",)]


@pytest.mark.parametrize("switch", ["kernels.decode_layer:SWITCH_ENV", ["kernels.decode_layer:SWITCH_ENV",
                                                                        "kernels.routing:DEFAULT"]])
def test_api_switch_names_module_constants(switch):
    assert api_errors(switch=switch) == []


@pytest.mark.parametrize("switch", ["SWITCH_ENV", [], ["kernels.decode_layer"]])
def test_api_switch_must_be_package_module_colon_name(switch):
    assert [e.path for e in api_errors(switch=switch)] == [("api", "switch")]


def test_process_is_one_of_the_built_in_processes():
    def process_errors(value):
        return [e for e in validate("record", {"process": value}) if e.path[:1] == ("process",)]

    assert process_errors("single-pr") == [] and process_errors("stacked") == []
    assert [e.choices for e in process_errors("single_pr")] == [("stacked", "single-pr")]
