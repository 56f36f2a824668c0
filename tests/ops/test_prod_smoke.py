"""The production smoke test's reading of docker-compose.yml (tools/prod_smoke.py): compose's interpolation, and
every compose host, database, role and container path replaced by this machine's, so that what it starts is what
compose configures (CI runs the smoke test itself: `make smoke`)."""

import pytest

from tools import prod_smoke

SECRETS = {
    "SECRET_KEY": "s" * 50,
    "POSTGRES_PASSWORD": "superpw",
    "OWNER_DB_PASSWORD": "ownerpw",
    "APP_DB_PASSWORD": "apppw",
    "REDIS_PASSWORD": "redispw",
    "BACKUP_DB_PASSWORD": "backuppw",
    "CASINO_SIGNING_KEYS": "/keys",
    "CASINO_BACKUPS": "/backups",
}


def test_interpolation_follows_compose_defaults_requirements_and_dollar_escapes():
    variables = {"SET": "x", "EMPTY": ""}
    assert prod_smoke.interpolate("${SET:-d} ${EMPTY:-d} ${EMPTY-d} ${UNSET-d} $$HOME", variables) == "x d  d $HOME"
    with pytest.raises(prod_smoke.SmokeFailure, match="set REDIS_PASSWORD"):
        prod_smoke.interpolate("${REDIS_PASSWORD:?set REDIS_PASSWORD}", variables)


def test_every_service_url_points_at_this_machine_with_the_runs_own_database_and_roles(tmp_path):
    stack = prod_smoke.Stack(tmp_path, deadline=float("inf"))
    stack.secrets = SECRETS
    services = prod_smoke.compose_services(SECRETS)
    web, migrate = stack.env(services["web"]), stack.env(services["migrate"])

    redis = f"redis://:redispw@127.0.0.1:{stack.redis_port}/"
    assert web["CACHE_URL"].startswith(redis) and web["CELERY_BROKER_URL"].startswith(redis)
    assert web["DATABASE_URL"] == f"postgres://{stack.app_role}:apppw@127.0.0.1:5432/{stack.database}"
    assert migrate["DATABASE_URL"] == f"postgres://{stack.owner}:ownerpw@127.0.0.1:5432/{stack.database}"
    assert web["EXPORT_ROOT"] == str(tmp_path / "exports")
    assert web["CASINO_SIGNING_KEY_DIR"] == str(tmp_path / "keys")
    assert web["DEBUG"] == "0"
    assert not any("@redis:" in value or "@postgres:" in value for value in (*web.values(), *migrate.values()))


def test_a_compose_host_the_run_cannot_replace_fails_the_run(tmp_path):
    stack = prod_smoke.Stack(tmp_path, deadline=float("inf"))
    with pytest.raises(prod_smoke.SmokeFailure, match="CACHE_URL names a compose host"):
        stack.env({"environment": {"CACHE_URL": "redis://:pw@redis:6380/2"}})


def test_the_totp_codes_follow_rfc_6238():
    """RFC 6238's test vector (SHA-1, key "12345678901234567890", T = 59 s: 94287082, six digits kept)."""
    assert prod_smoke.totp(b"12345678901234567890".hex(), at=59) == "287082"
