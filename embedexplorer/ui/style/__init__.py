"""How the window looks: theme colours, the bundled fonts, focus frames."""
