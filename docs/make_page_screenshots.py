"""The map's web page as headless Chromium draws it, for docs/sharing.md.

    python docs/make_page_screenshots.py

Writes the bundled MiniLM's family map and its whole vocabulary as pages (as
``embedexplorer map --html`` does), opens each offline in headless Chromium, points at a
word with a real mouse event (and finds another in the whole vocabulary), and saves the
screenshots beside this file.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))

from embedexplorer import open_table  # noqa: E402
from embedexplorer.core.maps.family_map import family_map, load_families  # noqa: E402
from embedexplorer.core.maps.map_origin import with_provenance  # noqa: E402
from embedexplorer.core.maps.web_page import write_map_page  # noqa: E402
from embedexplorer.core.maps.word_maps import word_map  # noqa: E402
from embedexplorer.core.maps.word_sets import whole_vocabulary  # noqa: E402
from tests.browser import Chromium  # noqa: E402


def point_at(browser: Chromium, label: str) -> None:
    index = browser.evaluate(f"window.mapPage.indexOf({label!r})")
    at = browser.evaluate(f"window.mapPage.screenOf({index})")
    browser.mouse("mouseMoved", at["x"], at["y"])


def main() -> None:
    table = open_table("bundled")
    families = load_families()
    folder = Path(tempfile.mkdtemp(prefix="ee-pages-"))
    small = folder / "families.html"
    write_map_page(small, with_provenance(family_map(table, families), table), table.name)
    whole = folder / "whole.html"
    write_map_page(whole, with_provenance(word_map(table, whole_vocabulary(table), families), table), table.name)
    with Chromium(width=1366, height=768) as browser:
        browser.open(small)
        point_at(browser, "paris")
        browser.screenshot(DOCS / "web-page-families.png")
        browser.open(whole)
        find = browser.evaluate("(() => { const b = document.getElementById('find').getBoundingClientRect();"
                                " return [b.left + 20, b.top + 10]; })()")
        browser.click(*find)
        browser.type_text("monday")
        point_at(browser, "tuesday")
        browser.screenshot(DOCS / "web-page-whole-vocabulary.png")
    print(f"pages in {folder}; screenshots in {DOCS}")


if __name__ == "__main__":
    main()
