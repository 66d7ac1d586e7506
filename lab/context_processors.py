"""Template context for the base layout: the user's workspaces, the one being viewed, and what they may do there."""

from django.db.models import F

from .access import workspaces_of
from .models import Membership, Role


def workspaces(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    # One query: the join that filters by membership also carries my role in each workspace.
    mine = list(workspaces_of(user).annotate(my_role=F("memberships__role")).order_by("name"))
    current_id = request.session.get("workspace_id")
    current = next((w for w in mine if w.pk == current_id), mine[0] if mine else None)
    # The navigation offers "New comparison" only to those who may create one.
    can_create = current is not None and Membership(role=current.my_role).allows(Role.EDITOR)
    return {"my_workspaces": mine, "current_workspace": current, "nav_can_create": can_create}
