"""The bundled font: the map and its pictures use it, undrawable tokens become escapes,
and the self-test's text check fails on a blank or glyph-less picture."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QFontInfo, QRawFont

from embedexplorer.jobs.table_jobs import TOKENS
from embedexplorer.ui.map.canvas import MapCanvas
from embedexplorer.ui.style import fonts
from embedexplorer.ui.style.text_check import check_map_text, ink_share
from tests.ui.conftest import ANSWER_TIMEOUT_MS, answers, open_model

NIHON = "日本"  # two CJK characters that DejaVu Sans has no glyph for


def _map_canvas(qtbot, minilm_table) -> MapCanvas:  # type: ignore[no-untyped-def]
    from embedexplorer.core.maps.family_map import family_map, load_families

    canvas = MapCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(1000, 760)
    canvas.set_map(family_map(minilm_table, load_families()), "all-MiniLM-L6-v2")
    return canvas


def test_the_map_draws_with_the_bundled_family_and_its_picture_has_text(qtbot, minilm_table, tmp_path) -> None:
    canvas = _map_canvas(qtbot, minilm_table)
    assert fonts.register() == fonts.FAMILY
    assert QFontInfo(canvas.labels.font).family() == "DejaVu Sans"
    assert QFontInfo(canvas.caption.item.font()).family() == "DejaVu Sans"
    png = tmp_path / "map.png"
    canvas.export_png(png, width=1200)
    assert set(canvas.export_text_areas) == {"caption", "legend names", "bottom axis title", "left axis title"}
    assert check_map_text(canvas, png) == []


def test_a_blank_caption_or_a_glyph_less_one_fails_the_check(qtbot, minilm_table, tmp_path) -> None:
    canvas = _map_canvas(qtbot, minilm_table)
    canvas.caption.setText("&nbsp;", size="9pt")  # the caption area is there, with no ink
    png = tmp_path / "blank.png"
    canvas.export_png(png, width=1200)
    problems = check_map_text(canvas, png)
    assert any("caption area of the exported picture is blank" in p for p in problems), problems
    canvas.caption.setText(f"model {NIHON}", size="9pt")  # not escaped: DejaVu has no glyph for it
    canvas.export_png(png, width=1200)
    problems = check_map_text(canvas, png)
    assert any("of the caption have no glyph" in p and "U+65E5" in p for p in problems), problems


def test_ink_share_counts_only_pixels_off_the_background(qtbot, tmp_path) -> None:
    from PySide6.QtGui import QColor, QImage

    image = QImage(100, 10, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    for x in range(10):
        image.setPixelColor(x, 0, QColor("black"))
    image.setPixelColor(50, 5, QColor(250, 250, 250))  # antialiasing noise is no ink
    assert ink_share(image, 0, 0, 100, 10) == 10 / 1000
    assert ink_share(image, 20, 0, 50, 10) == 0.0


def test_characters_the_bundled_font_lacks_become_escapes_on_the_map(qtbot) -> None:
    from PySide6.QtWidgets import QWidget

    qtbot.addWidget(QWidget())
    font = fonts.map_font(8)
    # Read the font file directly: which of these characters does it have?
    raw = QRawFont(str(fonts.font_files()[0]), 12)
    assert raw.isValid() and raw.supportsCharacter(ord("é")) and not raw.supportsCharacter(ord("日"))
    assert fonts.for_map(" café", font) == " café"
    assert fonts.for_map(NIHON, font) == "U+65E5 U+672C"
    assert fonts.for_map("a日b", font) == "a U+65E5 b"
    assert fonts.for_map("x\u200b", font) == "x U+200B"  # invisible: escaped whatever the font


def test_chips_escape_what_no_installed_font_can_draw(qtbot, window) -> None:
    open_model(qtbot, window, "bundled")
    text = f"bank {NIHON}"  # set, not typed: Qt's test keyboard has no CJK keys
    answered = answers(window, TOKENS).ready
    with qtbot.waitSignal(answered, timeout=ANSWER_TIMEOUT_MS, check_params_cb=lambda r: r.text == text):
        window.panes.token_pane.set_text(text)
    tokens = window.panes.token_pane.chip_tokens
    assert [t.token for t in tokens] == ["bank", "日", "本"]
    # Independently of the app: does any font on this machine have a glyph for 日?
    anywhere = any(
        QRawFont.fromFont(fonts.map_font(10) if family == fonts.FAMILY else _font(family)).supportsCharacter(0x65E5)
        for family in QFontDatabase.families()
    )
    expected = "日" if anywhere else "U+65E5"
    assert window.panes.token_pane.chip_labels == [
        f"bank\n{tokens[0].id}", f"{expected}\n{tokens[1].id}", f"{'本' if anywhere else 'U+672C'}\n{tokens[2].id}"
    ]


def _font(family: str):  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QFont

    return QFont(family)
