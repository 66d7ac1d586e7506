"""Admin registrations for comparisons: browse groups, rounds and outputs; runs start from the app, not here."""

from django.contrib import admin

from .models import CompareGroup, Dataset, DatasetRow, Output, Round, Variant


class VariantInline(admin.TabularInline):
    model = Variant
    extra = 0


@admin.register(CompareGroup)
class CompareGroupAdmin(admin.ModelAdmin):
    list_display = ["title", "mode", "workspace", "blind", "created_at"]
    list_filter = ["mode", "blind"]
    search_fields = ["title"]
    inlines = [VariantInline]


class OutputInline(admin.TabularInline):
    model = Output
    extra = 0
    fields = ["variant", "status", "error", "ttft_ms", "latency_ms", "output_tokens", "cost"]
    readonly_fields = fields


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    list_display = ["group", "number", "status", "created_at", "started_at", "finished_at", "deadline"]
    list_filter = ["status"]
    inlines = [OutputInline]


class DatasetRowInline(admin.TabularInline):
    model = DatasetRow
    extra = 0


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace", "created_at"]
    inlines = [DatasetRowInline]
