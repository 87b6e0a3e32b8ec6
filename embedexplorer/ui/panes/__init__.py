"""One module per pane of the window: each asks the worker for itself and follows the state."""
