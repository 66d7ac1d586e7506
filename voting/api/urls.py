"""Voting API routes, mounted at /api/v1/ by the project urls."""

from django.urls import path

from . import views

urlpatterns = [
    path("rounds/<int:pk>/vote/", views.RoundVote.as_view(), name="api-round-vote"),
]
