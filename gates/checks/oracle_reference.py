"""Where a numeric contract's oracle lives: `numeric_contract.oracle` names a function that exists.

The oracle is written `module:function` (or `module.function`). A module of the repository
(found under the package roots, as G5 finds packages) must bind the function at its top level,
read with `ast` (`gates.python_api.module_scope`); a module the repository does not hold must
be installed where `gate-check` runs (its top-level package is found by the import system,
without importing it). A module that cannot be read statically is taken as it is.
"""

from __future__ import annotations

import importlib.util

from gates.checks.context import GateContext
from gates.model.errors import InputError
from gates.model.paths import resolve_inside
from gates.python_api.module_scope import DEFAULT_PACKAGE_ROOTS, module_paths, module_reader, module_scope
from gates.python_api.scope_model import decode_source


def oracle_problem(oracle: str, ctx: GateContext) -> str | None:
    """Why the oracle cannot be the function it names; None when it can."""
    module, separator, name = oracle.partition(":")
    if not separator:
        module, _, name = oracle.rpartition(".")
    parts = module.split(".") + name.split(".")
    if not module or not name or not all(part.isidentifier() for part in parts):
        return f"numeric_contract.oracle {oracle!r} does not name a function as 'module:function'"
    roots = list(ctx.policy.api_package_roots) if ctx.policy is not None else list(DEFAULT_PACKAGE_ROOTS)
    read_module = module_reader(lambda path: _read_text(ctx, path), roots)
    try:
        found = read_module(module)
    except InputError as exc:
        return f"numeric_contract.oracle {oracle!r}: {exc.path} cannot be read ({exc.message})"
    if found is None:
        top = module.split(".")[0]
        in_repository = any(_read_text(ctx, path) is not None for _, path in module_paths(top, roots))
        if in_repository or _installed(top) is False:
            looked = ", ".join(path for _, path in module_paths(module, roots))
            where = "" if in_repository else f", and no installed module {top!r} either"
            return f"numeric_contract.oracle {oracle!r}: no module {module!r} in the repository (looked for " \
                   f"{looked}){where}"
        return None  # an installed library's function: not read
    scope = module_scope(found[0], found[1], read_module, module)
    first = name.split(".")[0]
    if scope.error is None and first not in scope.names:
        return f"numeric_contract.oracle {oracle!r}: {found[1]} binds no {first!r} at its top level"
    return None


def _installed(top: str) -> bool | None:
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return None


def _read_text(ctx: GateContext, rel_path: str) -> str | None:
    resolved = resolve_inside(ctx.repo_root, rel_path)
    if resolved is None or not resolved.is_file():
        return None
    try:
        return decode_source(resolved.read_bytes(), rel_path)
    except OSError as exc:
        raise InputError(rel_path, 1, f"cannot be read ({exc.strerror or exc})") from None
