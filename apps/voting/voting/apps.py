from django.apps import AppConfig


class VotingConfig(AppConfig):
    name = "voting"
    default_auto_field = "django.db.models.BigAutoField"
