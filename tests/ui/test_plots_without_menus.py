"""No plot in the window builds pyqtgraph's own context menus.

The map and the row never did. The Layers, Health and Compare plots did: a menu of axes that do not move (their
mouse is off) and plot options nobody asked for, two top-level menus per plot owned by Python and deleted by the
collector whenever it came round. Collected on the window's timer (the app's own collector), they took the
process down now and then with a segmentation fault: a widget's destructor, called by the collector, called into
freed memory. Runs of the Layers tests that ended so, outside a debugger: 5 of 27 with the menus (2 of 8 at
2ff42df), 0 of 14 without them.
"""

from __future__ import annotations

import pyqtgraph as pg

from tests.ui.conftest import open_model


def test_no_plot_of_the_window_builds_a_context_menu(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    open_model(qtbot, window, "bundled")
    layers = window.panes.layers_pane.plots  # built when first shown or needed, as the histogram
    compare = window.panes.compare.pane
    plots = [layers.cosine_plot, layers.length_plot, window.panes.health_pane.histogram]
    plots += [compare.overlap_plot, compare.cosine_plot]
    plots += window.findChildren(pg.PlotWidget)
    for plot in plots:
        item = plot.getPlotItem()
        assert item.vb.menu is None, plot.accessibleName() or type(plot.parent()).__name__
        assert not item.menuEnabled()
    # Everything pyqtgraph draws in the window: its view boxes have no menu either.
    drawn = [item for view in window.findChildren(pg.GraphicsView) for item in view.items()]
    boxes = [item for item in drawn if isinstance(item, pg.ViewBox)]
    assert boxes and all(box.menu is None for box in boxes)
