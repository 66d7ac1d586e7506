"""Create (or reset the password of) a demo user with a workspace, for `make run`, and fill the workspace the
first time with a prompt library, finished comparisons of prompts and of models (votes, verdicts), datasets, a
judge and an experiment (voting.demo)."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from lab.services import workspace_create
from voting.demo import demo_seed


class Command(BaseCommand):
    help = "Create the demo user and workspace, fill it with examples once, and print the login."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="demo")
        parser.add_argument("--password", default="demo-lab-2026")
        parser.add_argument("--empty", action="store_true", help="leave the workspace empty")

    def handle(self, *args, username, password, empty, **options):
        User = get_user_model()
        user, created = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.save()
        membership = user.memberships.select_related("workspace").first()
        workspace = membership.workspace if membership else workspace_create(owner=user, name="Demo workspace")
        if not empty and demo_seed(workspace=workspace, user=user):
            self.stdout.write(
                "Filled the demo workspace with a prompt library, comparisons of prompts and of models, datasets, "
                "a judge and an experiment."
            )
        self.stdout.write(self.style.SUCCESS(f"Log in at {settings.SITE_URL}/ as {username} / {password}"))
