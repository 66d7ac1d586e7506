"""A named prompt of a workspace and its numbered versions; a version records the one it came from (`parent`).

They live in compare's app (imported by compare.models) but in this package, beside the code that uses them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from lab.models import Workspace


class Prompt(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="prompts")
    name = models.CharField(max_length=200)
    # The version people should use now ("promote"); None until one is promoted or the first is saved.
    current = models.ForeignKey("PromptVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            # Also serves the library list of a workspace, by name.
            models.UniqueConstraint(fields=["workspace", "name"], name="prompt_name_unique_in_workspace"),
        ]

    def __str__(self) -> str:
        return self.name


class PromptVersion(models.Model):
    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()  # 1, 2, 3 … within the prompt
    text = models.TextField()  # the last user message's template, kept with `messages` (the API's shorthand)
    # The version's messages as templates, [{role, content}]; a version saved as plain text is one user message.
    messages = models.JSONField(default=list, blank=True)
    system_prompt = models.TextField(blank=True)
    variables = models.JSONField(default=dict, blank=True)  # default values of its placeholders
    # Lineage: the version this one was edited from (any prompt's), None for a fresh start.
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    # The author's username as recorded: survives the user's deletion and a library moved between installations.
    author_name = models.CharField(max_length=150, blank=True)
    message = models.TextField(blank=True)  # what changed and why, like a commit message
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["prompt", "number"]
        constraints = [
            # Also serves "the versions of a prompt in order".
            models.UniqueConstraint(fields=["prompt", "number"], name="promptversion_number_unique_in_prompt"),
            models.CheckConstraint(condition=Q(number__gte=1), name="promptversion_number_from_one"),
            models.CheckConstraint(condition=~Q(parent=models.F("id")), name="promptversion_not_its_own_parent"),
        ]

    def __str__(self) -> str:
        return f"{self.prompt.name} v{self.number}"

    @property
    def name(self) -> str:
        return f"{self.prompt.name} v{self.number}"
