"""The record model: what design-gates reads and reports, as plain data.

Errors and findings, design records (safe YAML front matter, the §-numbered body), the
JSON schemas and their loader, the configuration and the risk policy, repository paths,
and the identities of authors and reviewers. The lowest layer: it imports no other
part of `gates`.
"""
