"""Vega-Lite, offline: the JavaScript bundle (Vega, Vega-Lite, vega-embed) a report inlines, and
static SVG/PNG of a chart for slides, both from vl-convert (no browser, no network).

Bundling takes seconds, so the bundle is kept in the user's cache directory, keyed by the
library versions; an unwritable cache only costs the time again.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import Any

import vl_convert as vlc

VL_VERSION = "6.4"  # the Vega-Lite version specs are written for and compiled with
SNIPPET = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"


def versions() -> dict[str, str]:
    """Library versions a report names in its provenance (what drew the charts)."""
    return {
        "vega": vlc.get_vega_version(),
        "vega-lite": VL_VERSION,
        "vega-embed": vlc.get_vega_embed_version(),
    }


def cache_dir() -> Path:
    """$SCOVILLE_CACHE_DIR, else $XDG_CACHE_HOME/scoville, else ~/.cache/scoville."""
    if env := os.environ.get("SCOVILLE_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scoville"


def bundle_path() -> Path:
    """Where the bundle of the installed library versions is cached."""
    key = hashlib.sha256(repr((sorted(versions().items()), SNIPPET)).encode()).hexdigest()[:12]
    return cache_dir() / f"vega-bundle-{key}.js"


@functools.cache
def bundle() -> str:
    """The minified bundle that defines window.vegaEmbed, window.vega and window.vegaLite."""
    try:
        path = bundle_path()
        cached = path.read_text(encoding="utf-8")
        if "window.vegaEmbed" in cached:
            return cached
    except (OSError, RuntimeError):  # no cache yet, or no home directory to hold one
        pass
    text: str = vlc.javascript_bundle(SNIPPET, vl_version=VL_VERSION)
    try:
        path = bundle_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # atomic: a concurrent report never reads half a bundle
    except (OSError, RuntimeError):
        pass
    return text


def to_svg(spec: dict[str, Any]) -> str:
    """A standalone SVG document of one Vega-Lite chart."""
    svg: str = vlc.vegalite_to_svg(spec, vl_version=VL_VERSION)
    return svg


def to_png(spec: dict[str, Any], scale: float = 2.0) -> bytes:
    """PNG bytes of one Vega-Lite chart at `scale` x its pixel size (2 = sharp on slides)."""
    png: bytes = vlc.vegalite_to_png(spec, vl_version=VL_VERSION, scale=scale)
    return png
