"""Site entry: send a person to their current workspace's home, or to log in."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect

from lab.views import current_workspace_id


@login_required
def home(request):
    workspace_id = current_workspace_id(request)
    if workspace_id is None:
        return redirect("lab:workspace_new")
    return redirect("workspace_home", pk=workspace_id)
