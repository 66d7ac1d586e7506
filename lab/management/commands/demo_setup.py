"""Create (or reset the password of) a demo user with a workspace, for `make run`."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from lab.services import workspace_create


class Command(BaseCommand):
    help = "Create the demo user and workspace and print the login."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="demo")
        parser.add_argument("--password", default="demo-lab-2026")

    def handle(self, *args, username, password, **options):
        User = get_user_model()
        user, created = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.save()
        if not user.memberships.exists():
            workspace_create(owner=user, name="Demo workspace")
        self.stdout.write(self.style.SUCCESS(f"Log in at http://127.0.0.1:8000/ as {username} / {password}"))
