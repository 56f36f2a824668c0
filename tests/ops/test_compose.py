"""docker-compose.yml and the Dockerfile, read with a YAML parser (no container engine here): safe by default.

Required secrets, the web port on 127.0.0.1 unless configured, one image for web, worker, beat and migrate,
health checks on /sante/ for each, no start-up deadlock between them. Variables are substituted as compose
does (${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, $$).
"""

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
APP_SERVICES = ("migrate", "web", "worker", "beat")
SECRETS = (
    "SECRET_KEY",
    "POSTGRES_PASSWORD",
    "OWNER_DB_PASSWORD",
    "APP_DB_PASSWORD",
    "REDIS_PASSWORD",
    "BACKUP_DB_PASSWORD",
)
KEYS_HOST_DIR = "/srv/casino/signing-keys"
REQUIRED_ENV = {name: f"{name.lower().replace('_', '-')}-value" for name in SECRETS} | {
    "CASINO_SIGNING_KEYS": KEYS_HOST_DIR,
    "CASINO_BACKUPS": "/mnt/offsite/casino-backups",
}
KEYS_MOUNT = "/run/secrets/casino-signing-keys"
VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


class MissingVariable(Exception):
    pass


def substitute(value, env):
    def replace(match):
        if match.group(0) == "$$":
            return "$"
        name = match.group(1) or match.group(4)
        operator, argument = match.group(2), match.group(3)
        current = env.get(name)
        if operator in (":-", ":?"):
            missing = not current
        else:
            missing = current is None
        if operator and operator.endswith("?") and missing:
            raise MissingVariable(f"{name}: {argument}")
        if operator and operator.endswith("-") and missing:
            return argument
        return current or ""

    if isinstance(value, str):
        return VARIABLE.sub(replace, value)
    if isinstance(value, dict):
        return {key: substitute(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, env) for item in value]
    return value


def compose(**env):
    return substitute(yaml.safe_load(COMPOSE.read_text()), {**REQUIRED_ENV, **env})


def test_the_compose_file_parses_and_declares_the_stack():
    services = compose()["services"]
    assert set(services) == {"postgres", "redis", "backup", *APP_SERVICES}


@pytest.mark.parametrize("secret", SECRETS)
def test_the_stack_refuses_to_start_without_each_secret(secret):
    with pytest.raises(MissingVariable, match=secret):
        compose(**{secret: ""})


def test_no_password_has_a_default_value():
    text = COMPOSE.read_text()
    defaults = re.findall(r"\$\{([A-Z_]*(?:PASSWORD|SECRET)[A-Z_]*)(:?-)", text)
    assert defaults == []
    used = set(re.findall(r"\$\{([A-Z_]*(?:PASSWORD|SECRET)[A-Z_]*)", text))
    assert used == set(SECRETS)


def test_the_web_port_is_published_on_the_loopback_unless_configured():
    assert compose()["services"]["web"]["ports"] == ["127.0.0.1:8000:8000"]
    assert compose(WEB_BIND="0.0.0.0", PORT="8080")["services"]["web"]["ports"] == ["0.0.0.0:8080:8000"]
    for name, service in compose()["services"].items():
        if name != "web":
            assert "ports" not in service, name


def test_web_worker_beat_and_migrate_run_one_image_tag():
    services = compose()["services"]
    images = {services[name]["image"] for name in APP_SERVICES}
    assert images == {"casino-back-office:local"}
    tagged = compose(CASINO_IMAGE="registry.example/casino", CASINO_TAG="1.4.2")["services"]
    assert {tagged[name]["image"] for name in APP_SERVICES} == {"registry.example/casino:1.4.2"}


def test_every_application_service_connects_with_the_required_passwords():
    services = compose()["services"]
    for name in APP_SERVICES:
        environment = services[name]["environment"]
        assert environment["DEBUG"] == "0" and environment["SECRET_KEY"] == REQUIRED_ENV["SECRET_KEY"]
        assert REQUIRED_ENV["REDIS_PASSWORD"] in environment["CELERY_BROKER_URL"], name
    assert REQUIRED_ENV["APP_DB_PASSWORD"] in services["web"]["environment"]["DATABASE_URL"]
    assert urlsplit(services["migrate"]["environment"]["DATABASE_URL"]).username == "casino_owner"
    assert REQUIRED_ENV["OWNER_DB_PASSWORD"] in services["migrate"]["environment"]["DATABASE_URL"]
    assert "--requirepass" in " ".join(services["redis"]["command"])


def test_web_worker_and_beat_have_health_checks_on_the_sante_checks():
    services = compose()["services"]
    assert services["web"]["healthcheck"]["test"] == ["CMD", "python", "docker/healthcheck.py"]
    assert "/sante/" in (ROOT / "docker" / "healthcheck.py").read_text()
    assert services["worker"]["healthcheck"]["test"][1:] == [
        "python",
        "manage.py",
        "health_check",
        "health",
        "--no-http",
    ]
    # Beat's checks beat itself: a task it sent lately (tests/ops/test_check_beat.py).
    assert services["beat"]["healthcheck"]["test"][1:] == ["python", "manage.py", "check_beat", "--minutes", "5"]


def test_no_service_waits_for_one_that_waits_for_it():
    # The web's health check needs a worker: a worker waiting for a healthy web would never start.
    services = compose()["services"]
    graph = {name: set(service.get("depends_on", {})) for name, service in services.items()}
    for name, needs in graph.items():
        assert needs <= set(services), name
        seen, todo = set(), list(needs)
        while todo:
            current = todo.pop()
            assert current != name, f"{name} waits for itself through {seen}"
            if current not in seen:
                seen.add(current)
                todo += graph[current]
    assert "web" not in graph["worker"] | graph["beat"]


def test_beat_keeps_its_schedule_in_the_database_not_in_a_file():
    command = compose()["services"]["beat"]["command"]
    assert "beat" in command and "--schedule" not in command and "-s" not in command


def test_the_dockerfile_installs_from_the_lock_and_checks_its_health():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install --require-hashes -r requirements.txt" in dockerfile
    assert "HEALTHCHECK" in dockerfile and "docker/healthcheck.py" in dockerfile
    assert "collectstatic" in dockerfile


def test_the_stack_refuses_to_start_without_the_signing_keys_folder():
    with pytest.raises(MissingVariable, match="CASINO_SIGNING_KEYS"):
        compose(CASINO_SIGNING_KEYS="")


def test_the_signing_keys_are_mounted_read_only_where_the_settings_read_them_for_the_services_that_sign():
    services = compose()["services"]
    for name in ("web", "worker"):
        assert f"{KEYS_HOST_DIR}:{KEYS_MOUNT}:ro" in services[name]["volumes"], name
        environment = services[name]["environment"]
        assert environment["CASINO_SIGNING_KEY_DIR"] == KEYS_MOUNT, name
        assert environment["CASINO_SIGNING_KEY_AUTOCREATE"] == "0", name  # a missing key is an alert, not a new key
        # The merge kept the common settings.
        assert environment["DEBUG"] == "0" and environment["EXPORT_ROOT"] == "/app/exports", name
        assert "exports:/app/exports" in services[name]["volumes"], name
    for name in ("beat", "migrate", "postgres", "redis"):
        assert not any(KEYS_MOUNT in volume for volume in services[name].get("volumes", [])), name
        assert "CASINO_SIGNING_KEY_DIR" not in services[name].get("environment", {}), name
    # The image holds no key: the Dockerfile copies the project, and keys/ is left out of the build context.
    assert "keys" in (ROOT / ".dockerignore").read_text().split()


def test_the_settings_read_the_keys_folder_where_compose_mounts_it():
    settings_text = (ROOT / "casino" / "settings.py").read_text()
    assert 'os.environ.get("CASINO_SIGNING_KEY_DIR"' in settings_text
    assert 'env_bool("CASINO_SIGNING_KEY_AUTOCREATE"' in settings_text


def test_every_redis_url_in_any_service_carries_the_redis_password():
    # Redis runs with --requirepass: a URL without the password (the cache's, once) fails every call it serves.
    password = REQUIRED_ENV["REDIS_PASSWORD"]
    found = []
    for name, service in compose()["services"].items():
        for variable, value in (service.get("environment") or {}).items():
            if isinstance(value, str) and value.startswith(("redis://", "rediss://")):
                found.append((name, variable))
                assert urlsplit(value).password == password, f"{name}: {variable}"
    assert {variable for _, variable in found} >= {"CACHE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"}


def test_postgresql_archives_every_wal_segment_into_the_backup_folder_the_backup_service_writes():
    services = compose()["services"]
    postgres, backup = services["postgres"], services["backup"]
    settings = dict(
        value.split("=", 1)
        for flag, value in zip(postgres["command"], postgres["command"][1:], strict=False)
        if flag == "-c"
    )
    assert settings["archive_mode"] == "on" and settings["wal_level"] == "replica"
    assert int(settings["archive_timeout"]) <= 60  # the RPO the operations guide states
    # Never over a segment already archived; written under a temporary name, then renamed.
    assert settings["archive_command"].startswith("test ! -f /backups/wal/%f && cp %p /backups/wal/%f.tmp")
    mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in postgres["volumes"]}
    assert mounts["/backups"] == REQUIRED_ENV["CASINO_BACKUPS"]
    assert f"{REQUIRED_ENV['CASINO_BACKUPS']}:/backups" in backup["volumes"]
    assert "exports:/exports:ro" in backup["volumes"]


def test_the_backup_service_connects_with_the_replication_only_role_and_checks_its_last_base_backup():
    backup = compose()["services"]["backup"]
    assert backup["environment"]["PGUSER"] == "casino_backup"
    assert backup["environment"]["PGPASSWORD"] == REQUIRED_ENV["BACKUP_DB_PASSWORD"]
    assert backup["command"][-1] == "loop" and backup["healthcheck"]["test"][-1] == "check"
    init = (ROOT / "docker" / "postgres-backup-init.sh").read_text()
    assert "LOGIN REPLICATION" in init and "NOSUPERUSER" in init
    assert (
        "./docker/postgres-backup-init.sh:/docker-entrypoint-initdb.d/20-backup-role.sh:ro"
        in (compose()["services"]["postgres"]["volumes"])
    )


def test_the_backups_require_their_folder():
    with pytest.raises(MissingVariable, match="CASINO_BACKUPS"):
        compose(CASINO_BACKUPS="")


def test_every_image_is_pinned_to_an_exact_version():
    services = compose()["services"]
    for name in ("postgres", "backup", "redis"):
        assert re.fullmatch(r"[a-z]+:\d+\.\d+(\.\d+)?-[a-z]+", services[name]["image"]), name
    assert services["postgres"]["image"] == services["backup"]["image"]  # pg_basebackup of the server's version
    base = re.search(r"^FROM (\S+)", (ROOT / "Dockerfile").read_text(), re.MULTILINE).group(1)
    assert re.fullmatch(r"python:3\.11\.\d+-slim-[a-z]+", base)


def test_every_service_has_resource_limits_and_rotated_logs():
    for name, service in compose()["services"].items():
        limits = service["deploy"]["resources"]["limits"]
        assert float(limits["cpus"]) > 0 and re.fullmatch(r"\d+[mg]", limits["memory"]), name
        assert service["logging"]["driver"] == "json-file", name
        assert service["logging"]["options"]["max-size"] and int(service["logging"]["options"]["max-file"]) >= 2


def test_the_worker_waits_longer_than_an_export_may_run_before_it_is_killed():
    from casino.tasks import build_export

    grace = re.fullmatch(r"(\d+)m", compose()["services"]["worker"]["stop_grace_period"])
    assert int(grace.group(1)) * 60 > build_export.time_limit


def test_migrations_run_as_the_owner_who_is_not_the_superuser():
    services = compose()["services"]
    assert services["postgres"]["environment"]["POSTGRES_USER"] == "postgres"
    init = (ROOT / "docker" / "postgres-init.sh").read_text()
    assert "CREATE ROLE casino_owner LOGIN PASSWORD '${OWNER_DB_PASSWORD}' NOSUPERUSER" in init
    assert 'ALTER DATABASE "$POSTGRES_DB" OWNER TO casino_owner' in init
    assert urlsplit(services["migrate"]["environment"]["DATABASE_URL"]).username == "casino_owner"


def test_the_export_storage_can_be_a_bucket_for_every_service_that_reads_or_writes_the_packages():
    options = '{"bucket_name": "casino-exports", "file_overwrite": false}'
    services = compose(EXPORT_STORAGE_BACKEND="storages.backends.s3.S3Storage", EXPORT_STORAGE_OPTIONS=options)
    for name in ("web", "worker", "beat"):
        environment = services["services"][name]["environment"]
        assert environment["EXPORT_STORAGE_BACKEND"] == "storages.backends.s3.S3Storage", name
        assert environment["EXPORT_STORAGE_OPTIONS"] == options, name
        # boto3's credentials come from the shell when set (a null value: compose passes the variable through).
        assert environment["AWS_ACCESS_KEY_ID"] is None and environment["AWS_SECRET_ACCESS_KEY"] is None, name
    by_default = compose()["services"]["web"]["environment"]
    assert by_default["EXPORT_STORAGE_BACKEND"] == "" and by_default["EXPORT_STORAGE_OPTIONS"] == ""
