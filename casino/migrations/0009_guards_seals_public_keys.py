"""The database holds the casinos' public keys only, several per casino for rotation, and the journal's seals (R23).

A private key stored by the earlier version is written to its file under CASINO_SIGNING_KEY_DIR (mode 600) before
its column is dropped, so that the exports it signed stay verifiable and the casino keeps signing with it.
"""

import hashlib
import os
from pathlib import Path

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def move_private_keys_out(apps, schema_editor):
    from cryptography.hazmat.primitives import serialization

    CasinoKey = apps.get_model("casino", "CasinoKey")
    for key in CasinoKey.objects.all():
        public = serialization.load_pem_public_key(key.public_key_pem.encode())
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        CasinoKey.objects.filter(pk=key.pk).update(key_id=hashlib.sha256(raw).hexdigest()[:16])
        if not key.private_key_pem:
            continue
        folder = Path(settings.CASINO_SIGNING_KEY_DIR)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"casino-{key.casino_id}.pem"
        if not path.exists():
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as file:
                file.write(key.private_key_pem)


class Migration(migrations.Migration):
    dependencies = [("casino", "0008_guards_no_maintenance_switch")]

    operations = [
        migrations.AddField(
            model_name="casinokey",
            name="key_id",
            field=models.CharField(db_index=True, default="", max_length=16, verbose_name="identifiant de la clé"),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="casinokey",
            name="retired_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="retirée le"),
        ),
        migrations.RunPython(move_private_keys_out, migrations.RunPython.noop),
        migrations.RemoveField(model_name="casinokey", name="private_key_pem"),
        migrations.AlterField(
            model_name="casinokey",
            name="casino",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="signing_keys", to="casino.casino"
            ),
        ),
        migrations.AlterModelOptions(
            name="casinokey",
            options={
                "ordering": ["casino", "-created_at"],
                "verbose_name": "clé de signature",
                "verbose_name_plural": "clés de signature",
            },
        ),
        migrations.CreateModel(
            name="Seal",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("sequence", models.PositiveBigIntegerField(verbose_name="numéro d'ordre scellé")),
                ("hash", models.CharField(max_length=64, verbose_name="empreinte scellée")),
                ("sealed_at", models.DateTimeField(verbose_name="scellé le")),
                ("signature", models.TextField(verbose_name="signature Ed25519 (base64)")),
                (
                    "reason",
                    models.CharField(
                        choices=[("day_end", "Fin de journée de jeu"), ("export", "Export")],
                        max_length=10,
                        verbose_name="motif",
                    ),
                ),
                ("gaming_day", models.DateField(blank=True, null=True, verbose_name="journée de jeu")),
                (
                    "casino",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="seals", to="casino.casino"
                    ),
                ),
                (
                    "export",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="seals",
                        to="casino.export",
                    ),
                ),
                (
                    "key",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="seals", to="casino.casinokey"
                    ),
                ),
            ],
            options={
                "verbose_name": "scellement du journal",
                "verbose_name_plural": "scellements du journal",
                "ordering": ["casino", "sequence", "pk"],
            },
        ),
    ]
