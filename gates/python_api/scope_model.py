"""The data a module's surface is read into, and where the modules of a package live.

`Parameter` and `Entry` describe one bound name (`gates.python_api.module_scope` fills them in,
`gates.python_api.api_surface` compares them); `module_paths` / `module_reader` find a dotted
module's file under the package roots (`.` and `src` by default).
"""

from __future__ import annotations

import ast
import codecs
import hashlib
import io
import tokenize
from collections.abc import Callable
from dataclasses import dataclass

from gates.model.errors import InputError

POSITIONAL_ONLY = "positional-only"
POSITIONAL = "positional"
KEYWORD_ONLY = "keyword-only"
VAR_POSITIONAL = "*args"
VAR_KEYWORD = "**kwargs"
STAR_IMPORT = "star-import"
DEFAULT_PACKAGE_ROOTS = (".", "src")
UNREADABLE = "the checker cannot read this module's surface statically"

ReadText = Callable[[str], "str | None"]
"""`read_text("kernels/api.py")` -> one repository file's text, or None when it is not there;
raises `InputError` when it is there but unreadable."""

ReadModule = Callable[[str], "tuple[str, str] | None"]
"""`read_module("kernels.impl")` -> (source text, repository path), or None when the
repository holds no such module; raises `InputError` when the file is there but unreadable."""


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str
    default: str | None = None  # source text of the default, None when required
    value: str | None = None  # a default naming constants: its value with theirs filled in (`gates.python_api.default_values`)
    reference: tuple[tuple[str, ...], ...] = ()  # imports the default names, to follow (then value is a template)

    @property
    def required(self) -> bool:
        return self.default is None and self.kind not in (VAR_POSITIONAL, VAR_KEYWORD)

    @property
    def shown_default(self) -> str | None:
        """The default as a message shows it: `_SPLITS (= 4)` when it names a constant."""
        return self.default if self.value is None else f"{self.default} (= {self.value})"

    @property
    def effective_default(self) -> str | None:
        """What the default is compared by: the constant's value when it names one, else its source text."""
        return self.default if self.value is None else self.value


@dataclass(frozen=True)
class Entry:
    """One bound name: a function, a class, a constant or an import."""

    name: str
    kind: str  # "function" | "class" | "constant" | "import" | "module-import" | "star-import"
    line: int
    params: tuple[Parameter, ...] | None = None  # functions and methods ("Class.__init__")
    value: str | None = None  # constants: the value's source text
    origin: tuple[str, int] | None = None  # (path, line) of the definition when it lives in another module
    decorators: tuple[str, ...] = ()  # qualified decorator text, outermost first (`gates.python_api.decorators`)
    source: str | None = None  # imports: "module:name" (`from module import name`) or "module" (`import module`)
    passthrough: bool = False  # a decorator that hands back a (*args, **kwargs) functools.wraps wrapper
    fingerprint: Fingerprint | str | None = None  # functions: a digest of the whole definition
    bases: tuple[str, ...] = ()  # classes: qualified base classes, inherited members are read from them
    generated: bool = False  # the `__init__` a dataclass or NamedTuple generates from its fields
    exported: bool = False  # handed out on purpose: a module `__getattr__` or lazy module lists it
    returns_argument: str | None = None  # decorators: `decorators.DIRECT` (`def d(fn): ...; return fn`), or `FACTORY`
    is_async: bool = False  # functions: `async def` (callers get a coroutine)
    # classes: what the body takes from instances, "unhashable" (`__eq__` without `__hash__`, `__hash__ = None`)
    # and "slots" (`__slots__`)
    limits: frozenset[str] = frozenset()


def evolve(item, **changes):
    """`dataclasses.replace(item, **changes)` for `Entry` and `Parameter`, which a history run copies by the hundred
    thousand: frozen dataclasses whose `__init__` only sets their fields (no `__post_init__`, no field left out of
    `__init__`), so the copy is their fields with `changes` applied, without calling `__init__` again. A name that is
    no field raises TypeError, as `replace` does."""
    state = item.__dict__
    if not state.keys() >= changes.keys():
        raise TypeError(f"{type(item).__name__} has no field {', '.join(sorted(changes.keys() - state.keys()))}")
    copied = object.__new__(item.__class__)
    copied.__dict__.update(state)
    copied.__dict__.update(changes)
    return copied


def decode_source(data: bytes, path: str) -> str:
    """A Python source file's text, decoded the way Python decodes it: a UTF-8 BOM, else the PEP 263 coding
    cookie of its first two lines (`# coding: latin-1`), else UTF-8. Raises `InputError` naming the line."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as undecodable:
            line = data[: undecodable.start].count(b"\n") + 1
            raise InputError(path, line, f"not valid UTF-8 (byte offset {undecodable.start})") from None
        raise InputError(path, getattr(exc, "lineno", None) or 1, f"unreadable Python source: {exc.msg}") from None
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        start = getattr(exc, "start", 0)
        line = data[:start].count(b"\n") + 1
        name = codecs.lookup(encoding).name
        if name in ("utf-8", "utf-8-sig"):
            raise InputError(path, line, f"not valid UTF-8 (byte offset {start})") from None
        raise InputError(path, line, f"not valid {name}, the encoding its coding cookie names (byte offset {start})") \
            from None


def module_name(path: str, root: str = ".") -> str:
    """`kernels/decode_attention/api.py` -> `kernels.decode_attention.api` (`src/kernels/api.py` under root `src`)."""
    if root not in (".", "") and path.startswith(root.rstrip("/") + "/"):
        path = path[len(root.rstrip("/")) + 1:]
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


DefaultReader = Callable[[ast.expr], "tuple[str | None, tuple[tuple[str, ...], ...]]"]
"""`read_default(expr)` -> (the value of the constants a default names, the imports still to follow)."""


def parameters(args: ast.arguments, read_default: DefaultReader | None = None) -> tuple[Parameter, ...]:
    """The parameters of a `def` or `lambda`; `read_default` resolves defaults that name constants."""

    def parameter(name: str, kind: str, default: ast.expr | None) -> Parameter:
        if default is None:
            return Parameter(name, kind)
        value, reference = read_default(default) if read_default is not None else (None, ())
        return Parameter(name, kind, ast.unparse(default), value, reference)

    params: list[Parameter] = []
    positional = [(a, POSITIONAL_ONLY) for a in args.posonlyargs] + [(a, POSITIONAL) for a in args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for (arg, kind), default in zip(positional, defaults):
        params.append(parameter(arg.arg, kind, default))
    if args.vararg:
        params.append(Parameter(args.vararg.arg, VAR_POSITIONAL))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(parameter(arg.arg, KEYWORD_ONLY, default))
    if args.kwarg:
        params.append(Parameter(args.kwarg.arg, VAR_KEYWORD))
    return tuple(params)


class Fingerprint:
    """A digest of a whole definition, taken when something first reads it (a decorator's definition is described
    by it; most definitions never are) and kept on the node: a parsed module is read again in many commits. Equal to
    another fingerprint, or to the digest text, when the digests are equal."""

    __slots__ = ("_node",)

    def __init__(self, node: ast.AST):
        self._node = node

    def __str__(self) -> str:
        found = getattr(self._node, "_design_gates_fingerprint", None)
        if found is None:
            found = hashlib.sha256(ast.dump(self._node).encode()).hexdigest()[:12]
            self._node._design_gates_fingerprint = found
        return found

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"Fingerprint({str(self)!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, (Fingerprint, str)) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


def fingerprint(node: ast.AST) -> Fingerprint:
    """The fingerprint of a definition (`Fingerprint`): its digest is taken only when read."""
    return Fingerprint(node)


def module_paths(dotted: str, roots=DEFAULT_PACKAGE_ROOTS) -> list[tuple[str, str]]:
    """Where a dotted module may live, in the order Python's path finder tries them: (root, repository path).

    Under each package root in order (`.` is the repository root; `src` gives
    `src/a/b/__init__.py`), the package `a/b/__init__.py` comes before the module `a/b.py`.
    """
    rel = dotted.replace(".", "/")
    found = []
    for root in roots:
        prefix = "" if root in (".", "") else root.strip("/") + "/"
        found += [(root, f"{prefix}{rel}/__init__.py"), (root, f"{prefix}{rel}.py")]
    return found


def module_reader(read_text: ReadText, roots=DEFAULT_PACKAGE_ROOTS) -> ReadModule:
    """A `read_module` over `read_text(path)`, which reads one repository file (None: no such file).

    Modules are looked for where `module_paths` says. `read_text` raises `InputError`
    for a file that is there but cannot be read.
    """

    def read_module(dotted: str) -> tuple[str, str] | None:
        for _, path in module_paths(dotted, roots):
            text = read_text(path)
            if text is not None:
                return text, path
        return None

    return read_module




def package_homes(package: str, exists: Callable[[str], bool], roots=DEFAULT_PACKAGE_ROOTS) -> list[str]:
    """The module file of `package` under each package root that holds one, in root order.

    More than one is ambiguous: which copy Python imports depends on `sys.path`, and a
    checker that read the other one would check a decoy.
    """
    homes = []
    for root in roots:
        found = next((path for r, path in module_paths(package, roots) if r == root and exists(path)), None)
        if found is not None:
            homes.append(found)
    return homes
