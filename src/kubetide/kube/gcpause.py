"""Pausing the cyclic garbage collector while the caches build many objects at once.

Building 30,000 pods allocates millions of small objects, and the collector would scan them again and
again while none is garbage yet: measured (``python -m kubetide.bench live``), that is a third of the
cold start. The pause is process-wide, so pauses from several informer threads are counted and the
last one to end restores the collector.

A pause that built a whole cache (a list, a first conversion of every object) may ask to *freeze*
what exists when the last pause ends (``gc.freeze``): the objects move to the collector's permanent
generation, which no collection scans. Otherwise the first collection after the pause scans every
object built in it, and moves them on to be scanned again by the next generations: measured on
150,000 pods, seconds of a cold start for objects that live as long as the cache. Frozen objects are
still freed when no longer referenced (a replaced pod, an old list); only cyclic garbage that exists at
that moment stays, and the caches' objects form no cycles.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["gc_paused"]

_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_enabled = False
_gc_freeze_asked = False


@contextlib.contextmanager
def gc_paused(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic collection inside the block (a list, a rebuild of the views); nesting is fine.
    ``freeze``: when the last pause ends, move every object to the permanent generation."""
    global _gc_pausers, _gc_was_enabled, _gc_freeze_asked
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            _gc_freeze_asked = _gc_freeze_asked or freeze
            if _gc_pausers == 0:
                if _gc_freeze_asked:
                    gc.freeze()
                    _gc_freeze_asked = False
                if _gc_was_enabled:
                    gc.enable()
