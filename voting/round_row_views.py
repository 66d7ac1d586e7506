"""The comparison page's "save rounds as dataset rows" form (its template is compare's, posting here): voting's
because the reference answer is the team's vote."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from compare.access import dataset_from_body, group_for_user

from .round_winners import rounds_save_as_rows_voted


@login_required
@require_POST
def rounds_to_rows(request, pk):
    group = group_for_user(request.user, pk, write=True)
    rounds = group.rounds.select_related("group").order_by("number")
    number = request.POST.get("round", "")
    chosen = list(rounds.filter(number=int(number)) if number.isdigit() else rounds)
    dataset_id = request.POST.get("dataset", "")
    reference = request.POST.get("reference") == "on"
    try:
        # A dataset that is gone (or another workspace's) is refused, never replaced by a new one.
        dataset = dataset_from_body(int(dataset_id) if dataset_id.isdigit() else None, group.workspace)
        saved = rounds_save_as_rows_voted(
            workspace=group.workspace,
            user=request.user,
            rounds=chosen,
            dataset=dataset,
            name=request.POST.get("name", ""),
            reference=reference,
        )
        note = f", {saved.with_reference} with the winning answer as reference" if reference else ""
        same = len(chosen) - saved.added
        repeats = f" ({same} had the input of another row)" if same else ""
        messages.success(
            request,
            f"Saved {len(chosen)} round{'s' if len(chosen) != 1 else ''} as {saved.added} "
            f'row{"s" if saved.added != 1 else ""} of "{saved.dataset.name}"{repeats}{note}.',
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("compare:detail", group.pk)
