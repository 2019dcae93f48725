"""Building a site with `mkdocs build --strict` from the working tree, for the site tests.

MkDocs finds plugins through installed entry points.  So that a build uses this
checkout's plugin even where the installed package is older, ``mkdocs_env`` puts a
minimal distribution on ``PYTHONPATH`` that declares the ``mkdocs.plugins`` entry
points read from this checkout's ``pyproject.toml``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = REPO / "pyproject.toml"
EXAMPLES = REPO / "tests" / "examples"


def mkdocs_plugin_entry_points() -> dict[str, str]:
    """The ``mkdocs.plugins`` entry points pyproject.toml declares: name -> ``module:attribute``."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    return dict(project.get("entry-points", {}).get("mkdocs.plugins", {}))


def entry_point_distribution(root: Path) -> Path:
    """A folder holding a distribution that declares this checkout's MkDocs plugins; put it on sys.path."""
    dist_info = root / "design_gates_checkout-0.0.0.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: design-gates-checkout\nVersion: 0.0.0\n",
                                        encoding="utf-8")
    lines = ["[mkdocs.plugins]"] + [f"{name} = {target}" for name, target in mkdocs_plugin_entry_points().items()]
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def mkdocs_env(scratch: Path, report: Path | None = None) -> dict[str, str]:
    """The environment for a build: this checkout first on PYTHONPATH, its plugin registered."""
    path = [str(REPO), str(entry_point_distribution(scratch / "entry-points"))]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=os.pathsep.join(path))
    env.pop("DESIGN_GATES_REPORT", None)
    if report is not None:
        env["DESIGN_GATES_REPORT"] = str(report)
    return env


def build(config: Path, site: Path, report: Path | None = None) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of ``config`` into ``site``."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=config.parent, env=mkdocs_env(site.parent / f".{site.name}-env", report),
        capture_output=True, text=True, timeout=300,
    )


def team_site(root: Path, extra_config: str = "") -> Path:
    """A site without a navigation holding one example record, its evidence in docs/evidence/.

    The record comes from tests/examples, whose evidence sits outside any docs folder;
    here it moves into the docs, as in this repository, so that its links resolve.
    """
    record = (EXAMPLES / "G0" / "positive" / "form-complete-en.md").read_text(encoding="utf-8")
    record = record.replace("](../../evidence/", "](../evidence/").replace("path: evidence/", "path: docs/evidence/")
    (root / "docs" / "design").mkdir(parents=True)
    (root / "docs" / "design" / "form-complete-en.md").write_text(record, encoding="utf-8")
    shutil.copytree(EXAMPLES / "evidence", root / "docs" / "evidence")
    (root / "docs" / "index.md").write_text("# Kernel team\n", encoding="utf-8")
    config = root / "mkdocs.yml"
    config.write_text(f"site_name: Kernel team\nplugins: [design-gates]\n{extra_config}", encoding="utf-8")
    return config
