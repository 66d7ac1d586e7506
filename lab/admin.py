"""Admin registrations for the lab models; the encrypted key is never shown or edited here."""

from django.contrib import admin

from .models import ApiToken, AuditEntry, Connection, Membership, Workspace


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


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Only the hash is stored; revoke a token from its owner's page (which writes the audit entry)."""

    list_display = ["name", "user", "scope", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["scope"]
    exclude = ["key_hash"]
    readonly_fields = ["user", "name", "scope", "prefix", "created_at", "last_used_at", "revoked_at"]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """The log is read here, never written: entries come only from the services that make the changes."""

    list_display = ["created_at", "workspace", "actor_name", "action", "target_type", "target_name"]
    list_filter = ["action"]
    search_fields = ["actor_name", "target_name"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
