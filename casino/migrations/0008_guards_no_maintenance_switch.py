"""Remove the table whose row switched every append-only trigger off (R23); the new guards are installed after
migrate (casino.apps.install_append_only) and nothing but DDL can remove them."""

from django.db import migrations


def drop_switch(apps, schema_editor):
    from casino.audit import append_only

    connection = schema_editor.connection
    # The old triggers read the switch: they go first, the post_migrate hook installs their replacements.
    append_only.drop(connection)
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS casino_maintenance")


class Migration(migrations.Migration):
    dependencies = [("casino", "0007_cite_2007_articles")]

    operations = [migrations.RunPython(drop_switch, migrations.RunPython.noop)]
