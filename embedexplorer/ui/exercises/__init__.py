"""The chapter's exercises in the window: Guess first, analogy, family distances, two texts, teaching."""
