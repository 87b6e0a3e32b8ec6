"""One model found on this computer, as the listings show it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LocalModel:
    """A model on disk: what to show, what to open (a model spec), its size and where it came from.

    ``missing`` is set when the listing knows of the model (a manifest, a recent file,
    the first part of a split GGUF) but a file it needs is not there: it is shown, never offered.
    """

    name: str
    spec: str
    size_bytes: int
    kind: str  # where it was found: "hf-cache", "ollama", "lmstudio" or "recent"
    location: str = ""  # the file or folder that holds it
    file_format: str = ""  # "GGUF" or "safetensors"
    storage: str = ""  # how the weights are stored: "F16", "BF16", "Q4_K_M", ... ("" when not known)
    missing: str = ""  # what is missing, in a few words ("" when the model can be opened)

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "spec": self.spec,
            "source": self.kind,
            "format": self.file_format,
            "storage": self.storage or None,
            "size_bytes": self.size_bytes,
            "location": self.location,
            "missing": self.missing or None,
        }
