"""The window's type in the family the app bundles (DejaVu Sans, fonts-dejavu-core), for tests that measure text."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

from embedexplorer.ui.style import fonts


@pytest.fixture
def bundled_type(qapp):  # type: ignore[no-untyped-def]
    """DejaVu Sans 9 pt for the application while the test runs: widths are the same on every machine."""
    before = QFont(QApplication.font())
    family = fonts.register()
    assert family, "fonts-dejavu-core is installed by .ci/setup"
    QApplication.setFont(QFont(family, 9))
    yield
    QApplication.setFont(before)
