"""The vote-counting rule as SQL, written once: the triggers that keep VoteCount (Postgres and SQLite), their drops,
and the count of the votes per kind that fills the counts and that `manage.py vote_counts_check` recounts them by.

A vote counts under its kind: (comparison, choice, winner's variant, the UTC day it was first cast). The triggers
follow the votes, so that every path that writes or deletes a vote (services, cascades from comparisons, rounds,
answers and users, the admin, a raw UPDATE) keeps the counts, in the vote's own transaction. On Postgres they run
once per statement, over its transition tables: the statement's net change per kind is applied once, so a statement
deleting a million votes of one comparison updates a handful of counts once each, rather than one row a million
times in one transaction (each update of a row leaves a version the next one walks past). Increments are done in
the database (INSERT … ON CONFLICT … votes + n, UPDATE … votes - n), so concurrent votes all count, and kinds are
taken in key order, so two people swapping their votes between the same kinds cannot deadlock. A delete whose count
row is already gone (a comparison's deletion removes both) changes nothing. SQLite (embedded mode) runs one writer
at a time, so its triggers need no ordering; created_at is stored there as UTC text, whose date() is the UTC day.

Why migration 0007 imports this module rather than keeping its own copy: a migration must do tomorrow what it did
the day it was written, and a migration that imports app code changes with it. So these statements are frozen as
what 0007 installs (tests/voting/test_vote_count_sql.py fails when they change): a new rule gets statements of its
own here, a new migration drops these and installs those, and the recount follows the new rule, while 0007 keeps
importing these. Only strings and the standard library here, so a migration can import it without the app loaded.
"""

# The UTC day a vote was first cast, as each database writes it (a replaced vote keeps its created_at).
DAY = {"postgresql": "(created_at AT TIME ZONE 'UTC')::date", "sqlite": "date(created_at)"}

_KIND = f"group_id, choice, variant_id, {DAY['postgresql']} AS day"
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
    """,  # noqa: S608 (only this module's constants are put in; there are no values)
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

# The votes counted per kind, as the triggers count them; `{day}` is the database's DAY.
COUNT_BY_KIND = """
    SELECT group_id, choice, variant_id, {day}, COUNT(*) FROM voting_vote GROUP BY group_id, choice, variant_id, {day}
"""
# Existing votes, counted once when the triggers are installed.
FILL = "\n    INSERT INTO voting_votecount (group_id, choice, variant_id, day, votes)" + COUNT_BY_KIND


def count_by_kind(vendor: str) -> str:
    """The query for (group_id, choice, variant_id, day, votes) per kind, from the votes themselves."""
    if vendor not in DAY:
        raise NotImplementedError(f"vote counts have triggers for Postgres and SQLite, not {vendor}")
    return COUNT_BY_KIND.format(day=DAY[vendor])
