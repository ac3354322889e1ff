from django.urls import path

from . import views

urlpatterns = [
    path("", views.health),
    path("vote/", views.vote),
    path("clear-db/", views.clear_db),
    path("see-all/", views.see_all),
    path("see-cities/", views.see_cities),
]
