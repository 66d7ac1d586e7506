"""Template context for the base layout: the user's workspaces and the one being viewed."""

from .access import workspaces_of


def workspaces(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    mine = list(workspaces_of(user).order_by("name"))
    current_id = request.session.get("workspace_id")
    current = next((w for w in mine if w.pk == current_id), mine[0] if mine else None)
    return {"my_workspaces": mine, "current_workspace": current}
