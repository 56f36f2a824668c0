#!/bin/sh
# Runs once, when the database volume is created, as the superuser (POSTGRES_USER). casino_owner, no superuser,
# owns the database and its tables and runs the migrations; the application connects as casino_app, which owns
# nothing: it cannot drop or disable the append-only triggers, nor truncate (R23). `manage.py grant_app_role` (run
# by the `migrate` service after each migration) grants it every table the product uses, and the same rights by
# default on the tables the owner creates later; it takes back DELETE on what is recorded.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE casino_owner LOGIN PASSWORD '${OWNER_DB_PASSWORD}' NOSUPERUSER NOCREATEDB NOCREATEROLE;
ALTER DATABASE "$POSTGRES_DB" OWNER TO casino_owner;
ALTER SCHEMA public OWNER TO casino_owner;
CREATE ROLE casino_app LOGIN PASSWORD '${APP_DB_PASSWORD}' NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
GRANT CONNECT ON DATABASE "$POSTGRES_DB" TO casino_app;
GRANT USAGE ON SCHEMA public TO casino_app;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
SQL
