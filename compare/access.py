"""The one way to reach a group, round, variant, dataset (and its rows), prompt (and its versions) or experiment:
returns it or raises 404 (403 when the role is too low).

Objects of workspaces the caller is not a member of are indistinguishable from missing ones. Ids named in a
request body are a different case: they are input, so a foreign one is a 400 on that field.
"""

from django.core.exceptions import ValidationError
from django.http import Http404

from lab.access import membership_for_user, scoped_for_user
from lab.models import Role, Workspace

from .experiments.models import Experiment
from .models import CompareGroup, Dataset, DatasetRow, Round, Variant
from .prompts.models import Prompt, PromptVersion


def group_for_user(user, pk, write: bool = False) -> CompareGroup:
    """A group of one of the caller's workspaces; `write` needs the editor role."""
    return scoped_for_user(CompareGroup.objects.select_related("workspace"), user, pk, write=write)


def round_for_user(user, pk, write: bool = False) -> Round:
    rounds = Round.objects.select_related("group__workspace")
    return scoped_for_user(rounds, user, pk, workspace_path="group__workspace", write=write)


def dataset_for_user(user, pk, write: bool = False) -> Dataset:
    return scoped_for_user(Dataset.objects.select_related("workspace"), user, pk, write=write)


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


def prompt_for_user(user, pk, write: bool = False) -> Prompt:
    return scoped_for_user(Prompt.objects.select_related("workspace", "current"), user, pk, write=write)


def prompt_version_for_user(user, pk, write: bool = False) -> PromptVersion:
    versions = PromptVersion.objects.select_related("prompt__workspace", "parent__prompt")
    return scoped_for_user(versions, user, pk, workspace_path="prompt__workspace", write=write, name="prompt version")


def variant_for_user(user, pk, write: bool = False) -> Variant:
    variants = Variant.objects.select_related("group__workspace", "prompt_version")
    return scoped_for_user(variants, user, pk, workspace_path="group__workspace", write=write)


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
