"""A site configuration in its own folder, under its own name: what a centre's deployment looks like.

Shared by the UDF and Spark tests of issue 13.1 (the executors must run the
configuration the driver resolved, never the repository's `deid.yaml`).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: a tag format no default produces: silver text shows at a glance which config ran
SITE_TAG_FORMAT = "<<{label}>>"


def write_site_config(folder: Path) -> Path:
    """Copy conf/ to `folder`, add `site.yaml` with another tag format; `deid.yaml` stays there as a trap."""
    shutil.copytree(REPO / "conf", folder)
    text = (REPO / "conf" / "deid.yaml").read_text(encoding="utf-8")
    # paths that leave the configuration folder point back into the repository
    text = re.sub(r"(:\s*\[?)(\.\./[^\s\],]+)", lambda m: m.group(1) + str((REPO / "conf" / m.group(2)).resolve()), text)
    text, n = re.subn(r'tag_format: "\[\{label\}\]"', f'tag_format: "{SITE_TAG_FORMAT}"', text)
    assert n == 1, "conf/deid.yaml no longer has the default tag format this test replaces"
    text, n = re.subn(r'placeholder: "\[PHI\]"', f'placeholder: "{SITE_TAG_FORMAT.format(label="PHI")}"', text)
    assert n == 1, "conf/deid.yaml no longer has the default placeholder this test replaces"
    site = folder / "site.yaml"
    site.write_text(text, encoding="utf-8")
    return site
