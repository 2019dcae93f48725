"""design-gates: machine-checked design records for hot-path GPU kernel changes."""

__version__ = "0.1.0"
