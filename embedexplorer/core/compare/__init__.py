"""Two token tables compared token by token: what quantisation, training or another model changed."""
