"""The window's frame: the main window, the pane list, plugging, the model bar, messages, fitting, Help."""
