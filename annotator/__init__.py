"""annotator: blind double labeling, agreement, adjudication and frozen gold releases for RAG claims."""

__version__ = "0.1.0"
