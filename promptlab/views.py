"""Site entry: send a person to their current workspace's home, or to log in; the site's icon; and the site's 404
answer."""

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.views import defaults
from django.views.decorators.http import require_safe

from lab.views import current_workspace_id


@login_required
@require_safe
def home(request):
    workspace_id = current_workspace_id(request)
    if workspace_id is None:
        return redirect("lab:workspace_new")
    return redirect("workspace_home", pk=workspace_id)


@require_safe
def favicon(request):
    """/favicon.ico, asked for by whatever does not read the pages' icon link: the icon's static file. Looked up per
    request, since in production its name carries a hash from the manifest that collectstatic writes."""
    return redirect(static("favicon.svg"))


def not_found(request, exception=None):
    """A path under /api/ that matches nothing (e.g. a negative id) answers as the API does: JSON."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)
