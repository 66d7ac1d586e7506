# The comparison a vote is on is required, now that 0003 has filled it in; and the index and check that go with it.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('voting', '0003_vote_group_and_variant_filled'),
    ]

    operations = [
        migrations.AlterField(
            model_name='vote',
            name='group',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='compare.comparegroup'),
        ),
        migrations.AddIndex(
            model_name='vote',
            index=models.Index(fields=['group', 'id'], include=('choice', 'variant'), name='vote_group_cast_order'),
        ),
        migrations.AddConstraint(
            model_name='vote',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('output__isnull', True), ('variant__isnull', True)), models.Q(('output__isnull', False), ('variant__isnull', False)), _connector='OR'), name='vote_winner_names_its_variant'),
        ),
    ]
