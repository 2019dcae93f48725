"""What users run: the `gate-check` CLI and its sub-commands, the output formats, the
pytest plugin that collects records, pull-request bodies and their lint, and the
record scaffold (with its templates). Built on `gates.checks.runner`.
"""
