#!/bin/sh
# Runs once, when the database volume is created (after 10-app-role.sh). The `backup` service connects as
# casino_backup, which may only stream a base backup (REPLICATION): it reads no table and writes nothing.
# A replication connection matches no "all" line of pg_hba.conf: this adds the one line it needs, with a password.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE casino_backup LOGIN REPLICATION PASSWORD '${BACKUP_DB_PASSWORD}' NOSUPERUSER NOCREATEDB NOCREATEROLE;
SQL
echo "host replication casino_backup all scram-sha-256" >>"$PGDATA/pg_hba.conf"
