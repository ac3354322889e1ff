"""Start-up shared by serve and vote_worker: wait for the stores, then prepare them."""
import time

from django.conf import settings
from django.core.management.base import CommandError

from voting import stores


def prepare_stores(write):
    """Run the store's prepare() until it succeeds or VOTING_WAIT_SECONDS pass."""
    store = stores.current()
    deadline = time.monotonic() + settings.VOTING_WAIT_SECONDS
    while True:
        try:
            store.prepare()
            write(f"storage mode {settings.STORAGE_MODE}: stores ready, parties {', '.join(settings.VOTING_PARTIES)}")
            return
        except Exception as e:  # the stores may still be starting
            if time.monotonic() > deadline:
                raise CommandError(
                    f"storage mode {settings.STORAGE_MODE}: the stores did not answer within VOTING_WAIT_SECONDS="
                    f"{settings.VOTING_WAIT_SECONDS:g}: {type(e).__name__}: {e}"
                ) from e
            write(f"waiting for the stores: {type(e).__name__}: {str(e).strip()[:200]}")
            time.sleep(1)
