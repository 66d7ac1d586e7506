from django.db import migrations, models


def text_as_one_user_message(apps, schema_editor):
    """Every existing version's text becomes its one user message, as the variants' prompts did (0013)."""
    PromptVersion = apps.get_model("compare", "PromptVersion")
    versions = list(PromptVersion.objects.only("id", "text"))
    for version in versions:
        version.messages = [{"role": "user", "content": version.text}]
    PromptVersion.objects.bulk_update(versions, ["messages"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("compare", "0015_conversation_root"),
    ]

    operations = [
        migrations.AddField(
            model_name="promptversion",
            name="messages",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(text_as_one_user_message, migrations.RunPython.noop),
    ]
