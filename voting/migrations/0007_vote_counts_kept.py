# Vote counts kept by the database (voting.models.VoteCount): triggers on the votes table, and the existing votes
# counted once. A migration of its own, after the one creating the table, so that its unique index (which the
# triggers' ON CONFLICT names) exists. The SQL, and why the triggers count as they do, is voting/vote_count_sql.py's,
# frozen there as what this migration installs (a later rule gets statements of its own and a migration of its own).

from django.db import migrations

from voting.vote_count_sql import DAY, FILL, POSTGRES_DROP, POSTGRES_TRIGGERS, SQLITE_DROP, SQLITE_TRIGGERS


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in DAY:
        raise NotImplementedError(f"vote counts have triggers for Postgres and SQLite, not {vendor}")
    # On Postgres the votes table is locked against writes first (SHARE: reads go on), so no vote lands between the
    # count of the existing votes and the triggers taking over: both commit together with this migration.
    if vendor == "postgresql":
        schema_editor.execute("LOCK TABLE voting_vote IN SHARE MODE")
    for statement in POSTGRES_TRIGGERS if vendor == "postgresql" else SQLITE_TRIGGERS:
        schema_editor.execute(statement)
    schema_editor.execute(FILL.format(day=DAY[vendor]))


def uninstall(apps, schema_editor):
    for statement in POSTGRES_DROP if schema_editor.connection.vendor == "postgresql" else SQLITE_DROP:
        schema_editor.execute(statement)
    schema_editor.execute("DELETE FROM voting_votecount")  # counts no trigger keeps would drift from the votes


class Migration(migrations.Migration):

    dependencies = [
        ('voting', '0006_vote_counts'),
    ]

    operations = [
        migrations.RunPython(install, uninstall),
    ]
