"""manage.py vote_worker: v0's subscriber (voting.worker)."""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from voting.worker import Worker

from ._startup import prepare_stores


class Command(BaseCommand):
    help = "v0: subscribe to the vote channel and write each valid ballot to PostgreSQL."

    def handle(self, *args, **options):
        if settings.STORAGE_MODE != "v0":
            raise CommandError(f"the vote worker serves storage mode v0 only; STORAGE_MODE is {settings.STORAGE_MODE}")
        prepare_stores(lambda text: self.stdout.write(text))
        self.stdout.flush()
        Worker().run()
