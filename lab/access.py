"""The one way to reach a workspace-scoped object (or one's own API token): returns it or raises 404 (403 when the
role is too low).

Another workspace's objects are indistinguishable from missing ones, so ids leak nothing.
"""

from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import Http404

from .files.models import WorkspaceFile
from .invitations.models import Invitation
from .models import Connection, Membership, Role, Workspace
from .tokens.models import ApiToken


def membership_for_user(user, workspace_id, role: str = Role.VIEWER) -> Membership:
    """The caller's membership in a workspace, checked against the role an action needs."""
    if not getattr(user, "is_authenticated", False):
        raise Http404("No such workspace.")
    try:
        membership = Membership.objects.select_related("workspace").get(user=user, workspace_id=int(workspace_id))
    except (Membership.DoesNotExist, TypeError, ValueError) as exc:
        raise Http404("No such workspace.") from exc
    if not membership.allows(role):
        raise PermissionDenied(f"This needs the {Role(role).label.lower()} role in this workspace.")
    return membership


def workspace_for_user(user, workspace_id, role: str = Role.VIEWER) -> Workspace:
    return membership_for_user(user, workspace_id, role).workspace


def workspaces_of(user) -> QuerySet[Workspace]:
    if not getattr(user, "is_authenticated", False):
        return Workspace.objects.none()
    return Workspace.objects.filter(memberships__user=user)


def scoped_for_user(
    queryset: QuerySet, user, pk, *, workspace_path: str = "workspace", write: bool = False, name: str = ""
) -> Model:
    """An object of one of the caller's workspaces, which `workspace_path` leads to; `write` needs the editor role.

    `name` is what the 404 calls the object (its model's verbose name by default).
    """
    try:
        obj = queryset.filter(**{f"{workspace_path}__in": workspaces_of(user)}).get(pk=int(pk))
    except (queryset.model.DoesNotExist, TypeError, ValueError) as exc:
        raise Http404(f"No such {name or queryset.model._meta.verbose_name}.") from exc
    if write:
        membership_for_user(user, _workspace_id(obj, workspace_path), Role.EDITOR)
    return obj


def _workspace_id(obj: Model, workspace_path: str) -> int:
    for step in workspace_path.split("__")[:-1]:
        obj = getattr(obj, step)
    return obj.workspace_id


def connection_for_user(user, workspace_id, connection_id, role: str = Role.VIEWER) -> Connection:
    """A connection of a workspace; membership is checked first so a stranger gets 404, never 403."""
    workspace = membership_for_user(user, workspace_id).workspace
    try:
        connection = Connection.objects.visible_to(user).get(pk=int(connection_id), workspace=workspace)
    except (Connection.DoesNotExist, TypeError, ValueError) as exc:
        raise Http404("No such connection.") from exc
    membership_for_user(user, workspace_id, role)
    return connection


def member_for_user(user, workspace_id, member_id, role: str = Role.OWNER) -> Membership:
    """A member of a workspace, by their user id, for an action that needs `role` (an owner's by default): a
    stranger gets 404 and a member without the role 403, whether or not the id is a member."""
    workspace = membership_for_user(user, workspace_id, role).workspace
    try:
        return workspace.memberships.select_related("user", "workspace").get(user_id=int(member_id))
    except (Membership.DoesNotExist, TypeError, ValueError) as exc:
        raise Http404("No such member.") from exc


def invitation_for_user(user, workspace_id, invitation_id) -> Invitation:
    """An invitation of a workspace, for its owners: a stranger gets 404 and a member who is no owner 403."""
    workspace = membership_for_user(user, workspace_id, Role.OWNER).workspace
    try:
        return Invitation.objects.select_related("workspace").get(pk=int(invitation_id), workspace=workspace)
    except (Invitation.DoesNotExist, TypeError, ValueError) as exc:
        raise Http404("No such invitation.") from exc


def api_token_for_user(user, token_id) -> ApiToken:
    """One of the caller's own API tokens; anyone else's is indistinguishable from a missing one (404)."""
    try:
        return ApiToken.objects.get(pk=int(token_id), user=user)
    except (ApiToken.DoesNotExist, TypeError, ValueError) as exc:
        raise Http404("No such token.") from exc


def file_for_user(user, file_id) -> WorkspaceFile:
    """A file of one of the caller's workspaces; another workspace's file is indistinguishable from a missing one."""
    return scoped_for_user(WorkspaceFile.objects.all(), user, file_id, name="file")
