# Vote counts kept by the database (voting.models.VoteCount): triggers on the votes table, and the existing votes
# counted once. A migration of its own, after the one creating the table, so that its unique index (which the
# triggers' ON CONFLICT names) exists.

from django.db import migrations

# The counts follow the votes through triggers, so that every path that writes or deletes a vote (services, cascades
# from comparisons, rounds, answers and users, the admin, a raw UPDATE) keeps them, in the vote's own transaction.
# A vote counts under (comparison, choice, winner's variant, the UTC day it was first cast). On Postgres the triggers
# run once per statement, over its transition tables: the statement's net change per kind is applied once, so a
# statement deleting a million votes of one comparison updates a handful of counts once each, rather than one
# row a million times in one transaction (each update of a row leaves a version the next one walks past).
# Increments are done in the database (INSERT … ON CONFLICT … votes + n, UPDATE … votes - n), so concurrent votes
# all count, and kinds are taken in key order, so two people swapping their votes between the same kinds cannot
# deadlock. A delete whose count row is already gone (a comparison's deletion removes both) changes nothing.

_KIND = "group_id, choice, variant_id, (created_at AT TIME ZONE 'UTC')::date AS day"
_IN_KEY_ORDER = "GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, COALESCE(variant_id, 0), 4"
POSTGRES_TRIGGERS = [
    f"""
    CREATE FUNCTION voting_vote_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        changes refcursor;
        kind record;
    BEGIN
        IF TG_OP = 'INSERT' THEN
            OPEN changes FOR SELECT {_KIND}, COUNT(*)::int AS n FROM new_votes {_IN_KEY_ORDER};
        ELSIF TG_OP = 'DELETE' THEN
            OPEN changes FOR SELECT {_KIND}, -COUNT(*)::int AS n FROM old_votes {_IN_KEY_ORDER};
        ELSE  -- a re-vote for the same choice rewrites its row (updated_at) and nets to nothing
            OPEN changes FOR
                SELECT group_id, choice, variant_id, day, SUM(n)::int AS n FROM (
                    SELECT {_KIND}, 1 AS n FROM new_votes UNION ALL SELECT {_KIND}, -1 AS n FROM old_votes
                ) AS change {_IN_KEY_ORDER.replace("GROUP BY 1, 2, 3, 4", "GROUP BY 1, 2, 3, 4 HAVING SUM(n) <> 0")};
        END IF;
        LOOP
            FETCH changes INTO kind;
            EXIT WHEN NOT FOUND;
            IF kind.n > 0 THEN
                INSERT INTO voting_votecount (group_id, choice, variant_id, day, votes)
                VALUES (kind.group_id, kind.choice, kind.variant_id, kind.day, kind.n)
                ON CONFLICT (group_id, choice, COALESCE(variant_id, 0), day)
                DO UPDATE SET votes = voting_votecount.votes + EXCLUDED.votes;
            ELSE
                UPDATE voting_votecount SET votes = votes + kind.n
                WHERE group_id = kind.group_id AND choice = kind.choice
                AND COALESCE(variant_id, 0) = COALESCE(kind.variant_id, 0) AND day = kind.day;
            END IF;
        END LOOP;
        CLOSE changes;
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
    "CREATE TRIGGER voting_vote_counted_insert AFTER INSERT ON voting_vote REFERENCING NEW TABLE AS new_votes "
    "FOR EACH STATEMENT EXECUTE FUNCTION voting_vote_counts_changed()",
    "CREATE TRIGGER voting_vote_counted_delete AFTER DELETE ON voting_vote REFERENCING OLD TABLE AS old_votes "
    "FOR EACH STATEMENT EXECUTE FUNCTION voting_vote_counts_changed()",
    "CREATE TRIGGER voting_vote_counted_update AFTER UPDATE ON voting_vote "
    "REFERENCING OLD TABLE AS old_votes NEW TABLE AS new_votes "
    "FOR EACH STATEMENT EXECUTE FUNCTION voting_vote_counts_changed()",
    "CREATE TRIGGER voting_vote_counted_truncate AFTER TRUNCATE ON voting_vote "
    "FOR EACH STATEMENT EXECUTE FUNCTION voting_vote_counts_truncated()",
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS voting_vote_counted_insert ON voting_vote",
    "DROP TRIGGER IF EXISTS voting_vote_counted_delete ON voting_vote",
    "DROP TRIGGER IF EXISTS voting_vote_counted_update ON voting_vote",
    "DROP TRIGGER IF EXISTS voting_vote_counted_truncate ON voting_vote",
    "DROP FUNCTION IF EXISTS voting_vote_counts_changed()",
    "DROP FUNCTION IF EXISTS voting_vote_counts_truncated()",
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
