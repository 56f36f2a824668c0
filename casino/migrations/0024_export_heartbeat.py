from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("casino", "0023_merge_20261206_0935"),
    ]

    operations = [
        migrations.AddField(
            model_name="export",
            name="heartbeat_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="dernier signe de vie"),
        ),
    ]
