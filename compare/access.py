"""The one way to reach a group, round, dataset (and its rows) or experiment: returns it or raises 404 (403 when
the role is too low).

Objects of workspaces the caller is not a member of are indistinguishable from missing ones. Ids named in a
request body are a different case: they are input, so a foreign one is a 400 on that field.
"""

from django.core.exceptions import ValidationError
from django.db.models import Model, QuerySet
from django.http import Http404

from lab.access import membership_for_user, workspaces_of
from lab.models import Role, Workspace

from .experiments.models import Experiment
from .models import CompareGroup, Dataset, DatasetRow, Round


def _scoped(queryset: QuerySet, user, pk, workspace_path: str, write: bool) -> Model:
    try:
        obj = queryset.filter(**{f"{workspace_path}__in": workspaces_of(user)}).get(pk=int(pk))
    except (queryset.model.DoesNotExist, TypeError, ValueError) as exc:
        raise Http404(f"No such {queryset.model._meta.verbose_name}.") from exc
    if write:
        membership_for_user(user, _workspace_id(obj, workspace_path), Role.EDITOR)
    return obj


def _workspace_id(obj: Model, workspace_path: str) -> int:
    for step in workspace_path.split("__")[:-1]:
        obj = getattr(obj, step)
    return obj.workspace_id


def group_for_user(user, pk, write: bool = False) -> CompareGroup:
    """A group of one of the caller's workspaces; `write` needs the editor role."""
    return _scoped(CompareGroup.objects.select_related("workspace"), user, pk, "workspace", write)


def round_for_user(user, pk, write: bool = False) -> Round:
    return _scoped(Round.objects.select_related("group__workspace"), user, pk, "group__workspace", write)


def dataset_for_user(user, pk, write: bool = False) -> Dataset:
    return _scoped(Dataset.objects.select_related("workspace"), user, pk, "workspace", write)


def dataset_row(dataset: Dataset, position) -> DatasetRow:
    """A row of a dataset already reached through `dataset_for_user`, by its position."""
    row = dataset.rows.filter(position=position).first()
    if row is None:
        raise Http404("No such row.")
    return row


def experiment_for_user(user, pk) -> Experiment:
    """The experiment of a comparison the caller may read; 404 when the comparison is not an experiment."""
    experiment = Experiment.objects.filter(group=group_for_user(user, pk)).select_related("group__workspace").first()
    if experiment is None:
        raise Http404("This comparison is not an experiment.")
    return experiment


def workspace_from_body(user, workspace_id, role: str = Role.EDITOR) -> Workspace:
    """The workspace a create request names: 400 on the field when it is not one of the caller's."""
    try:
        return membership_for_user(user, workspace_id, role).workspace
    except Http404:
        raise ValidationError({"workspace": "No such workspace."}) from None


def dataset_from_body(dataset_id, workspace: Workspace) -> Dataset | None:
    """The dataset a request names, which must belong to `workspace`: 400 on the field otherwise."""
    if dataset_id is None:
        return None
    dataset = Dataset.objects.filter(pk=dataset_id, workspace=workspace).first()
    if dataset is None:
        raise ValidationError({"dataset": "No such dataset in this workspace."})
    return dataset
