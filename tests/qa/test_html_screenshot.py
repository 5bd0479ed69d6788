"""The page as a browser draws it: headless Chromium screenshots a made-up sample.

String checks cannot see a page that renders blank (a broken style sheet, an
unclosed tag swallowing the body); a screenshot can. Skips where Chromium
is not installed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from deid_core.qa.html_report import CATEGORY_COLOURS, write_sample_html
from deid_core.qa.items import ReviewItem, SampleInfo

WIDTH, HEIGHT = 1280, 1600
TIMEOUT_S = 60


def chromium() -> str | None:
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium")


def screenshot(html: Path, png: Path, profile: Path) -> subprocess.CompletedProcess[str]:
    """Run Chromium in its own process group, so a hung browser and its helpers are all stopped."""
    exe = chromium()
    assert exe is not None
    cmd = [
        exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
        f"--window-size={WIDTH},{HEIGHT}", f"--user-data-dir={profile}", f"--screenshot={png}", html.as_uri(),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"chromium did not finish within {TIMEOUT_S} s")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def pixels_near(img: np.ndarray, hex_colour: str, tolerance: int = 6) -> int:
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.int16)
    return int((np.abs(img.astype(np.int16) - rgb).max(axis=2) <= tolerance).sum())


def test_sample_page_renders_with_highlights(tmp_path: Path, sample: tuple[SampleInfo, list[ReviewItem]]) -> None:
    if chromium() is None:
        pytest.skip("headless Chromium not found (/usr/bin/chromium or 'chromium' on PATH; "
                    "Debian package 'chromium', installed by `make test`)")
    html = tmp_path / "report.html"
    png = tmp_path / "shot.png"
    write_sample_html(*sample, html)
    proc = screenshot(html, png, tmp_path / "profile")
    assert png.exists(), f"no screenshot; chromium exited {proc.returncode}: {proc.stderr[-2000:]}"

    with Image.open(png) as im:
        assert im.size == (WIDTH, HEIGHT)
        img = np.asarray(im.convert("RGB"))

    packed = (img[..., 0].astype(np.int32) << 16) | (img[..., 1].astype(np.int32) << 8) | img[..., 2]
    top = int(np.bincount(packed.ravel()).argmax())  # the most common colour is the page background
    background = np.array([top >> 16, (top >> 8) & 0xFF, top & 0xFF], dtype=np.int16)
    differs = np.abs(img.astype(np.int16) - background).max(axis=2) > 8
    assert differs.mean() > 0.02, "page looks blank"
    assert differs[HEIGHT // 2:].mean() > 0.01, "nothing drawn in the lower half: the reports did not render"

    present = {label: pixels_near(img, colour) for label, colour in CATEGORY_COLOURS.items()}
    shown = [label for label, n in present.items() if n >= 150]
    assert len(shown) >= 6, f"too few category colours drawn: {present}"
    for label in ("NAME", "DATE", "LOCATION"):  # the sample's most frequent categories, in the first report
        assert present[label] >= 1000, f"{label} highlights missing: {present}"
