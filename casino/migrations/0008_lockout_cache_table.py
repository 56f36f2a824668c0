"""The cache shared by every worker (API throttles): Django's database cache table, created whatever CACHES says so
that switching from Redis back to the database needs no manual `createcachetable`."""

from django.conf import settings
from django.core.management.commands.createcachetable import Command as CreateCacheTable
from django.db import migrations


def create_cache_table(apps, schema_editor):
    command = CreateCacheTable()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, settings.CACHE_TABLE, dry_run=False)


def drop_cache_table(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(settings.CACHE_TABLE)}")


class Migration(migrations.Migration):
    dependencies = [("casino", "0007_cite_2007_articles")]

    operations = [migrations.RunPython(create_cache_table, drop_cache_table)]
