"""The reviewer site in a real browser: headless Chromium against the built site on 127.0.0.1.

Skipped only when Chromium is missing and ``CI`` is not set; under CI a missing
Chromium is a failure.  Screenshots go to ``$DESIGN_GATES_SCREENSHOTS`` or
``test-artifacts/`` (git-ignored).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import struct
import subprocess
import threading
import zlib
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("material")

from mkdocs_site import REPO, build  # noqa: E402

GATES = [f"G{n}" for n in range(9)]


def chromium_binary() -> str:
    for name in (os.environ.get("DESIGN_GATES_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    if os.environ.get("CI"):
        pytest.fail("Chromium is not installed, and CI must run the browser test (apt-get install chromium)")
    pytest.skip("Chromium is not installed (apt-get install chromium)")


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    binary = chromium_binary()
    profile = tmp_path_factory.mktemp("chromium-profile")

    def run(url: str, *extra: str) -> str:
        command = [
            binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", "--hide-scrollbars", *extra, url,
        ]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"chromium exited {result.returncode}: {result.stderr[-2000:]}"
        return result.stdout

    return run


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    """The repository's site, built with --strict and served on a free port of 127.0.0.1."""
    chromium_binary()  # skip before building when there is no browser
    site = tmp_path_factory.mktemp("browser-site") / "site"
    result = build(REPO / "mkdocs.yml", site)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr[-4000:]}"

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def own_records() -> list[Path]:
    return sorted(p for p in (REPO / "docs" / "design").glob("*.md") if p.name != "index.md")


def screenshot_dir() -> Path:
    target = Path(os.environ.get("DESIGN_GATES_SCREENSHOTS") or REPO / "test-artifacts")
    target.mkdir(parents=True, exist_ok=True)
    return target


def png_size_and_colours(path: Path) -> tuple[int, int, int]:
    """Width, height and the number of distinct byte values in the decoded image rows."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    idat, offset = b"", 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if kind == b"IDAT":
            idat += data[offset + 8:offset + 8 + length]
        offset += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


def test_record_pages_show_the_gate_table_and_the_navigation(served_site, chromium):
    records = own_records()
    assert records, "the repository has no design records"
    for path in records:
        dom = chromium(f"{served_site}/design/{path.stem}/", "--dump-dom")
        assert '<html class="js"' in dom or re.search(r"<html[^>]*class=\"[^\"]*\bjs\b", dom), \
            "Material's script did not run"
        assert re.findall(r'<tr data-gate="(G\d)">', dom) == GATES, path.name
        for gate in GATES:
            row = re.search(rf'<tr data-gate="{gate}">(.*?)</tr>', dom, re.S).group(1)
            assert re.search(r"dg-badge--(pass|fail|not-applicable)", row), f"{path.name} {gate}: {row[:200]}"
        start = dom.find("md-nav--primary")
        assert start >= 0, f"{path.name}: no navigation"
        nav_html = dom[start:dom.find("md-sidebar--secondary", start)]
        links = re.findall(r'<a href="([^"]*)" class="md-nav__link([^"]*)"', nav_html)
        assert "Design records" in nav_html
        assert ("./", " md-nav__link--active") in links, f"{path.name}: the page is not the active navigation entry"
        for other in records:
            if other != path:
                assert (f"../{other.stem}/", "") in links, f"{path.name}: the navigation lacks {other.stem}"


def test_records_index_lists_every_record(served_site, chromium):
    dom = chromium(f"{served_site}/design/", "--dump-dom")
    assert re.findall(r'<tr data-record="([^"]+)">', dom) == sorted(p.stem for p in own_records())


def test_screenshot_of_a_record_page_shows_the_gate_table(served_site, chromium):
    record = next((p for p in own_records() if p.stem == "splitkv-decode-attention"), None) or own_records()[0]
    target = screenshot_dir() / f"record-{record.stem}.png"
    target.unlink(missing_ok=True)
    chromium(f"{served_site}/design/{record.stem}/", f"--screenshot={target}", "--window-size=1280,1600")
    width, height, colours = png_size_and_colours(target)
    assert (width, height) == (1280, 1600)
    assert colours > 16, "the screenshot is blank"
