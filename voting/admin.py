"""Admin registration for votes."""

from django.contrib import admin

from .models import Vote


@admin.register(Vote)
class VoteAdmin(admin.ModelAdmin):
    list_display = ["round", "user", "choice", "output", "updated_at"]
    list_filter = ["choice"]
