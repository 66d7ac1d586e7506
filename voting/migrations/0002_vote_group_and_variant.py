# Votes carry their comparison and their winner's variant (copies of round.group and output.variant), so a report
# reads a comparison's votes from one index with no join. Added nullable here, filled in 0003, the comparison made
# required in 0004: each step in a transaction of its own, because on Postgres filling foreign keys leaves deferred
# checks pending, and ALTER TABLE or CREATE INDEX refuse to run beside them.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('compare', '0002_experiments'),
        ('voting', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='vote',
            name='group',
            field=models.ForeignKey(db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='compare.comparegroup'),
        ),
        migrations.AddField(
            model_name='vote',
            name='variant',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='compare.variant'),
        ),
    ]
