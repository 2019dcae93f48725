"""Evidence artifacts: reading them (`artifacts`), binding them to the sources they
measured, signing them, and writing them from a team's pytest suite (the
`design_gates_evidence` plugin) or from a suite run that `--run-suites` starts.

Imports `gates.model` and, to name the commit an artifact was measured at, the git
adapter in `gates.history`.
"""
