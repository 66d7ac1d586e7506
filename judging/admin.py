"""Admin registrations for judging: browse judges, verdicts and assertion gradings; both kinds of job are made by
the app, never edited here."""

from django.contrib import admin

from .models import AssertionGrading, GroupJudge, JudgeConfig, Verdict, VerdictOutput


@admin.register(JudgeConfig)
class JudgeConfigAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace", "model", "scale", "mode", "created_at"]
    list_filter = ["scale", "mode"]
    search_fields = ["name", "model"]


@admin.register(GroupJudge)
class GroupJudgeAdmin(admin.ModelAdmin):
    list_display = ["group", "judge", "created_at"]


class VerdictOutputInline(admin.TabularInline):
    model = VerdictOutput
    extra = 0
    fields = ["output", "letter", "judged", "skip_reason", "score", "rank", "scores"]
    readonly_fields = fields


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ["round", "judge_name", "status", "winner", "tie", "judge_calls", "cost", "finished_at"]
    list_filter = ["status", "mode"]
    readonly_fields = [field.name for field in Verdict._meta.fields]
    inlines = [VerdictOutputInline]


@admin.register(AssertionGrading)
class AssertionGradingAdmin(admin.ModelAdmin):
    list_display = ["output", "status", "error", "finished_at"]
    list_filter = ["status"]
    readonly_fields = [field.name for field in AssertionGrading._meta.fields]
