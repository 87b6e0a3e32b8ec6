"""Small reusable widgets: labels that keep their size, elide or wrap; a plot's legend."""
