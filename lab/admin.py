"""Admin registrations for the lab models; the encrypted key is never shown or edited here."""

from django.contrib import admin

from .models import Connection, Membership, Workspace


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at", "worker_seen_at"]
    search_fields = ["name"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "workspace", "role"]
    list_filter = ["role"]


@admin.register(Connection)
class ConnectionAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "workspace", "base_url", "api_key_hint", "max_concurrency", "rpm"]
    list_filter = ["kind"]
    exclude = ["api_key_encrypted"]
    readonly_fields = ["api_key_hint", "models_fetched_at"]
