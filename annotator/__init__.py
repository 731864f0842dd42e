"""annotator: blind double labeling, agreement, adjudication and frozen gold releases for RAG claims.

For the people who use a release: `annotator.load_release(path)` verifies a release folder against
its manifest and returns its gold as a pandas DataFrame (annotator/release_load.py). It is loaded
on first use, so that `import annotator` imports neither pandas nor pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["__version__", "load_release"]

if TYPE_CHECKING:
    from annotator.release_load import load_release


def __getattr__(name: str) -> Any:
    """`annotator.load_release`, imported when first asked for (PEP 562)."""
    if name == "load_release":
        from annotator.release_load import load_release

        return load_release
    raise AttributeError(f"module 'annotator' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
