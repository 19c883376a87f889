"""Headless Chromium for the pages' tests (Debian's `chromium` package; CI
installs it, and there a skip is a failure: conftest.py)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def find_browser() -> str:
    """Chromium's path, or skip."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium on the PATH (Debian: apt-get install chromium)")


def chromium(browser: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    """Run headless Chromium with a fresh profile and nothing fetched in the background."""
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--hide-scrollbars", *args],
        capture_output=True, text=True, timeout=90)
