# Vote counts kept by the database (voting.models.VoteCount): triggers on the votes table, and the existing votes
# counted once. A migration of its own, after the one creating the table, so that its unique index (which the
# triggers' ON CONFLICT names) exists.

from django.db import migrations

# The counts follow the votes through triggers, so that every path that writes or deletes a vote (services, cascades
# from comparisons, rounds, answers and users, the admin, a raw UPDATE) keeps them, in the vote's own transaction.
# A vote counts under (comparison, choice, winner's variant, the UTC day it was first cast). Increments are done
# in the database (INSERT … ON CONFLICT … votes + 1, UPDATE … votes - 1), so concurrent votes all count. A change
# touches two counts, taken in key order, so two people swapping their votes between the same kinds cannot
# deadlock. A delete whose count row is already gone (a comparison's deletion removes both) changes nothing.

POSTGRES_TRIGGERS = [
    """
    CREATE FUNCTION voting_vote_count_add(g bigint, c text, v bigint, d date) RETURNS void LANGUAGE sql AS $$
        INSERT INTO voting_votecount (group_id, choice, variant_id, day, votes) VALUES (g, c, v, d, 1)
        ON CONFLICT (group_id, choice, COALESCE(variant_id, 0), day)
        DO UPDATE SET votes = voting_votecount.votes + 1
    $$
    """,
    """
    CREATE FUNCTION voting_vote_count_remove(g bigint, c text, v bigint, d date) RETURNS void LANGUAGE sql AS $$
        UPDATE voting_votecount SET votes = votes - 1
        WHERE group_id = g AND choice = c AND COALESCE(variant_id, 0) = COALESCE(v, 0) AND day = d
    $$
    """,
    """
    CREATE FUNCTION voting_vote_counted() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        old_day date;
        new_day date;
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            old_day := (OLD.created_at AT TIME ZONE 'UTC')::date;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            new_day := (NEW.created_at AT TIME ZONE 'UTC')::date;
        END IF;
        IF TG_OP = 'INSERT' THEN
            PERFORM voting_vote_count_add(NEW.group_id, NEW.choice, NEW.variant_id, new_day);
        ELSIF TG_OP = 'DELETE' THEN
            PERFORM voting_vote_count_remove(OLD.group_id, OLD.choice, OLD.variant_id, old_day);
        ELSIF (OLD.group_id, OLD.choice, COALESCE(OLD.variant_id, 0), old_day)
                < (NEW.group_id, NEW.choice, COALESCE(NEW.variant_id, 0), new_day) THEN
            PERFORM voting_vote_count_remove(OLD.group_id, OLD.choice, OLD.variant_id, old_day);
            PERFORM voting_vote_count_add(NEW.group_id, NEW.choice, NEW.variant_id, new_day);
        ELSE
            PERFORM voting_vote_count_add(NEW.group_id, NEW.choice, NEW.variant_id, new_day);
            PERFORM voting_vote_count_remove(OLD.group_id, OLD.choice, OLD.variant_id, old_day);
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE FUNCTION voting_vote_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM voting_votecount;
        RETURN NULL;
    END
    $$
    """,
    "CREATE TRIGGER voting_vote_counted_insert AFTER INSERT ON voting_vote "
    "FOR EACH ROW EXECUTE FUNCTION voting_vote_counted()",
    "CREATE TRIGGER voting_vote_counted_delete AFTER DELETE ON voting_vote "
    "FOR EACH ROW EXECUTE FUNCTION voting_vote_counted()",
    # Re-voting the same choice rewrites the row (updated_at) without changing its count: WHEN skips it.
    """
    CREATE TRIGGER voting_vote_counted_update AFTER UPDATE ON voting_vote FOR EACH ROW
    WHEN (
        OLD.group_id IS DISTINCT FROM NEW.group_id OR OLD.choice IS DISTINCT FROM NEW.choice
        OR OLD.variant_id IS DISTINCT FROM NEW.variant_id
        OR (OLD.created_at AT TIME ZONE 'UTC')::date IS DISTINCT FROM (NEW.created_at AT TIME ZONE 'UTC')::date
    )
    EXECUTE FUNCTION voting_vote_counted()
    """,
    "CREATE TRIGGER voting_vote_counted_truncate AFTER TRUNCATE ON voting_vote "
    "FOR EACH STATEMENT EXECUTE FUNCTION voting_vote_counts_truncated()",
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS voting_vote_counted_insert ON voting_vote",
    "DROP TRIGGER IF EXISTS voting_vote_counted_delete ON voting_vote",
    "DROP TRIGGER IF EXISTS voting_vote_counted_update ON voting_vote",
    "DROP TRIGGER IF EXISTS voting_vote_counted_truncate ON voting_vote",
    "DROP FUNCTION IF EXISTS voting_vote_counted()",
    "DROP FUNCTION IF EXISTS voting_vote_counts_truncated()",
    "DROP FUNCTION IF EXISTS voting_vote_count_add(bigint, text, bigint, date)",
    "DROP FUNCTION IF EXISTS voting_vote_count_remove(bigint, text, bigint, date)",
]

# SQLite (embedded mode) runs one writer at a time, so its triggers need no ordering; created_at is stored as UTC
# text, whose date() is the UTC day.
_SQLITE_ADD = """
    INSERT INTO voting_votecount (group_id, choice, variant_id, day, votes)
    VALUES (NEW.group_id, NEW.choice, NEW.variant_id, date(NEW.created_at), 1)
    ON CONFLICT (group_id, choice, COALESCE(variant_id, 0), day) DO UPDATE SET votes = votes + 1;
"""
_SQLITE_REMOVE = """
    UPDATE voting_votecount SET votes = votes - 1
    WHERE group_id = OLD.group_id AND choice = OLD.choice AND COALESCE(variant_id, 0) = COALESCE(OLD.variant_id, 0)
    AND day = date(OLD.created_at);
"""
SQLITE_TRIGGERS = [
    f"CREATE TRIGGER voting_vote_counted_insert AFTER INSERT ON voting_vote BEGIN {_SQLITE_ADD} END",
    f"CREATE TRIGGER voting_vote_counted_delete AFTER DELETE ON voting_vote BEGIN {_SQLITE_REMOVE} END",
    f"""
    CREATE TRIGGER voting_vote_counted_update AFTER UPDATE ON voting_vote
    WHEN OLD.group_id IS NOT NEW.group_id OR OLD.choice IS NOT NEW.choice OR OLD.variant_id IS NOT NEW.variant_id
        OR date(OLD.created_at) IS NOT date(NEW.created_at)
    BEGIN {_SQLITE_REMOVE} {_SQLITE_ADD} END
    """,
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS voting_vote_counted_insert",
    "DROP TRIGGER IF EXISTS voting_vote_counted_delete",
    "DROP TRIGGER IF EXISTS voting_vote_counted_update",
]

# Existing votes, counted once. On Postgres the votes table is locked against writes first (SHARE: reads go on), so
# no vote lands between this count and the triggers taking over: both commit together with this migration.
FILL = """
    INSERT INTO voting_votecount (group_id, choice, variant_id, day, votes)
    SELECT group_id, choice, variant_id, {day}, COUNT(*) FROM voting_vote GROUP BY group_id, choice, variant_id, {day}
"""
DAY = {"postgresql": "(created_at AT TIME ZONE 'UTC')::date", "sqlite": "date(created_at)"}


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in DAY:
        raise NotImplementedError(f"vote counts have triggers for Postgres and SQLite, not {vendor}")
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
