"""The five storage modes behind one interface (see base.Store); `current()` is the configured one."""
import threading

from django.conf import settings

_lock = threading.Lock()
_store = None


def build(mode):
    """A new store for mode (v0..v4)."""
    if mode == "v0":
        from .pubsub import PubSubStore

        return PubSubStore()
    if mode == "v1":
        from .pgdirect import DirectSQLStore

        return DirectSQLStore()
    if mode == "v2":
        from .orm import ORMStore

        return ORMStore()
    if mode in ("v3", "v4"):
        from .redishash import RedisHashStore

        return RedisHashStore()
    raise ValueError(f"unknown storage mode {mode!r}")


def current():
    """The store of settings.STORAGE_MODE, made once per process."""
    global _store
    with _lock:
        if _store is None:
            _store = build(settings.STORAGE_MODE)
        return _store
