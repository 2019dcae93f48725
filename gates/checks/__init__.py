"""The gates G0-G8 (one module each, registered in `registry.GATES`), the helpers they
share (evidence references, suite results, claims and numbers in prose, tolerances,
fingerprints) and the runner that applies them and the history checks to records.

Imports the lower layers: `gates.evidence`, `gates.history`, `gates.python_api`,
`gates.model`.
"""
