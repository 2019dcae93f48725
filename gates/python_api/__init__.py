"""The public API of a Python package, read statically with `ast` (nothing is imported).

Module scopes and what they bind, star imports, `__all__`, decorators, parameter
defaults and the default-route switches: the data G5 and the history check
`gates.history.api_compat` compare. Imports only `gates.model`.
"""
