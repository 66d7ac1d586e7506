"""The one way to reach a workspace-scoped object: returns it or raises 404 (403 when the role is too low).

Another workspace's objects are indistinguishable from missing ones, so ids leak nothing.
"""

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from .models import Connection, Membership, Role, Workspace


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


def connection_for_user(user, workspace_id, connection_id, role: str = Role.VIEWER) -> Connection:
    """A connection of a workspace; membership is checked first so a stranger gets 404, never 403."""
    workspace = membership_for_user(user, workspace_id).workspace
    try:
        connection = Connection.objects.get(pk=int(connection_id), workspace=workspace)
    except (Connection.DoesNotExist, TypeError, ValueError) as exc:
        raise Http404("No such connection.") from exc
    membership_for_user(user, workspace_id, role)
    return connection
