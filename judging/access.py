"""The one way to reach a judge configuration: returns it or raises 404 (403 when the role is too low).

Judges of workspaces the caller is not a member of are indistinguishable from missing ones. A judge named in a
request body is input, so a foreign or unknown one is a 400 on that field instead.
"""

from django.core.exceptions import ValidationError
from django.http import Http404

from lab.access import membership_for_user, scoped_for_user
from lab.models import Workspace

from .models import JudgeConfig


def judge_for_user(user, pk, write: bool = False) -> JudgeConfig:
    """A judge of one of the caller's workspaces; `write` needs the editor role."""
    return scoped_for_user(JudgeConfig.objects.select_related("workspace"), user, pk, write=write, name="judge")


def judge_in_workspace(user, workspace_id, pk, write: bool = False) -> JudgeConfig:
    """A judge reached through its workspace's URL: the workspace must be the caller's and hold the judge."""
    workspace = membership_for_user(user, workspace_id).workspace
    judge = judge_for_user(user, pk, write=write)
    if judge.workspace_id != workspace.pk:
        raise Http404("No such judge.")
    return judge


def judge_from_body(judge_id, workspace: Workspace) -> JudgeConfig | None:
    """The judge a request names, which must belong to `workspace`: 400 on the field otherwise."""
    if judge_id is None:
        return None
    judge = JudgeConfig.objects.filter(pk=judge_id, workspace=workspace).first()
    if judge is None:
        raise ValidationError({"judge": "No such judge in this workspace."})
    return judge
