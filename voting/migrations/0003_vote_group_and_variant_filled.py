# Fill in each vote's comparison and winning variant from its round and answer (see 0002).

from django.db import migrations

# Plain correlated subqueries: the same SQL runs on Postgres and on SQLite (embedded mode).
BACKFILL = [
    "UPDATE voting_vote SET group_id = (SELECT group_id FROM compare_round WHERE compare_round.id = voting_vote.round_id)",
    "UPDATE voting_vote SET variant_id = (SELECT variant_id FROM compare_output WHERE compare_output.id = voting_vote.output_id) WHERE output_id IS NOT NULL",
]


class Migration(migrations.Migration):

    dependencies = [
        ('voting', '0002_vote_group_and_variant'),
    ]

    operations = [
        migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop),
    ]
