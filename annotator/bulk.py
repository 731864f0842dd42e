"""Bulk work (imports, releases): Python's cyclic garbage collector paused while it runs."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[Callable[[], None]]:
    """Turn Python's cyclic garbage collector off for a bulk job and restore its previous state
    afterwards; objects are still freed by reference counting. Yields `collect`, which runs the
    collector on the young generations, for a job to call once per chunk.

    Why: a bulk job allocates millions of long-lived containers that the automatic collector
    rescans again and again (measured here: a 200,000-claim import 10.0 s -> 7.7 s, a
    100,000-claim release 11.5 s -> 6.7 s). The pause is process-wide: in the app it also holds
    for other sessions' threads while the job runs.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield lambda: gc.collect(1)
    finally:
        if was_enabled:
            gc.enable()
