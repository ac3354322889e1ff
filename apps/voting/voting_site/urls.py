"""Routes: the study's API lives under /voting/; / answers a plain greeting as its project did."""
from django.http import HttpResponse
from django.urls import include, path


def home(request):
    return HttpResponse("voting app of study 001 (orchbench); the API is under /voting/\n", content_type="text/plain")


urlpatterns = [
    path("", home),
    path("voting/", include("voting.urls")),
]
