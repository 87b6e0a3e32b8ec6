"""The chapter's exercises: guesses, analogies, the furthest family, two texts, lessons."""
