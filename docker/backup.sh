#!/bin/sh
# Backups of PostgreSQL and of the export files, run by compose's `backup` service (and by the restore drill,
# tools/restore_drill.py, which runs it natively). Everything goes under BACKUP_ROOT (compose: CASINO_BACKUPS, a
# folder that must live off this host):
#   wal/        every WAL segment, archived by PostgreSQL itself (archive_command, docker-compose.yml): with a base
#               backup, any point in time since that backup can be restored (recovery_target_time)
#   base/<UTC>/ base backups (pg_basebackup, tar, gzip, with the WAL needed to make each consistent on its own)
#   exports/    a copy of each export package: a package is never rewritten (R23), so a file copied once is final
#
#   backup.sh base      one base backup now, then the retention: keep BACKUP_KEEP base backups (default 7) and the
#                       archived WAL from the oldest one kept on (pg_archivecleanup); older WAL serve no restore
#   backup.sh retention the retention alone
#   backup.sh exports   copy the export packages not copied yet (never deletes one: they are regulated records)
#   backup.sh loop      compose's service: the exports every BACKUP_EXPORTS_SECONDS (default 300) and a base
#                       backup when the newest is older than BACKUP_BASE_HOURS (default 24)
#   backup.sh check     health: the newest base backup is younger than twice BACKUP_BASE_HOURS
# Connection: the libpq variables (PGHOST, PGPORT, PGUSER, PGPASSWORD), a role with REPLICATION only
# (docker/postgres-backup-init.sh).
set -eu

BACKUP_ROOT="${BACKUP_ROOT:-/backups}"
BACKUP_KEEP="${BACKUP_KEEP:-7}"
BACKUP_BASE_HOURS="${BACKUP_BASE_HOURS:-24}"
BACKUP_EXPORTS_SECONDS="${BACKUP_EXPORTS_SECONDS:-300}"
EXPORTS_DIR="${EXPORTS_DIR:-/exports}"

say() {
    # One JSON line, as every other process of the stack writes (the messages hold no quote nor backslash).
    printf '{"time": "%s", "level": "%s", "logger": "backup", "message": "%s"}\n' \
        "$(date -u +%Y-%m-%dT%H:%M:%S+00:00)" "$1" "$2"
}

newest_base() {
    find "$BACKUP_ROOT/base" -mindepth 1 -maxdepth 1 -type d ! -name '*.partial' 2>/dev/null | sort | tail -n 1
}

base() {
    mkdir -p "$BACKUP_ROOT/base" "$BACKUP_ROOT/wal"
    stamp="$(date -u +%Y%m%dT%H%M%SZ)"
    target="$BACKUP_ROOT/base/$stamp"
    # Written under a .partial name and renamed once complete: a base backup cut short is never taken for one.
    rm -rf "$target.partial"
    pg_basebackup --pgdata="$target.partial" --format=tar --gzip --wal-method=stream --checkpoint=fast \
        --label="casino $stamp" --no-password
    mv "$target.partial" "$target"
    say INFO "base backup $stamp written"
    retention
}

retention() {
    count="$(find "$BACKUP_ROOT/base" -mindepth 1 -maxdepth 1 -type d ! -name '*.partial' | wc -l)"
    excess=$((count - BACKUP_KEEP))
    if [ "$excess" -gt 0 ]; then
        find "$BACKUP_ROOT/base" -mindepth 1 -maxdepth 1 -type d ! -name '*.partial' | sort | head -n "$excess" |
            while read -r old; do
                rm -rf "$old"
                say INFO "base backup ${old##*/} removed (retention: $BACKUP_KEEP kept)"
            done
    fi
    oldest="$(find "$BACKUP_ROOT/base" -mindepth 1 -maxdepth 1 -type d ! -name '*.partial' | sort | head -n 1)"
    [ -n "$oldest" ] || return 0
    # The first WAL segment the oldest base backup kept needs, from its backup_label.
    first_wal="$(tar -xzOf "$oldest/base.tar.gz" backup_label | sed -n 's/^START WAL LOCATION: .*(file \([0-9A-F]*\))$/\1/p')"
    if [ -n "$first_wal" ]; then
        pg_archivecleanup "$BACKUP_ROOT/wal" "$first_wal"
    fi
}

exports() {
    mkdir -p "$BACKUP_ROOT/exports"
    copied=0
    for package in "$EXPORTS_DIR"/*.zip; do
        [ -f "$package" ] || continue
        name="${package##*/}"
        [ -f "$BACKUP_ROOT/exports/$name" ] && continue
        cp -p "$package" "$BACKUP_ROOT/exports/.$name.tmp"
        mv "$BACKUP_ROOT/exports/.$name.tmp" "$BACKUP_ROOT/exports/$name"
        copied=$((copied + 1))
    done
    [ "$copied" -eq 0 ] || say INFO "$copied export packages copied"
}

age_hours() {
    # Hours since the newest base backup (a large number when there is none).
    newest="$(newest_base)"
    if [ -z "$newest" ]; then
        echo 1000000
        return
    fi
    echo $((($(date +%s) - $(stat -c %Y "$newest")) / 3600))
}

case "${1:-}" in
base) base ;;
retention) retention ;;
exports) exports ;;
loop)
    while true; do
        if [ "$(age_hours)" -ge "$BACKUP_BASE_HOURS" ]; then
            base || say ERROR "base backup failed"
        fi
        exports || say ERROR "copy of the export packages failed"
        sleep "$BACKUP_EXPORTS_SECONDS"
    done
    ;;
check)
    age="$(age_hours)"
    [ "$age" -lt $((2 * BACKUP_BASE_HOURS)) ] || {
        say ERROR "newest base backup is $age hours old"
        exit 1
    }
    ;;
*)
    echo "usage: $0 base|retention|exports|loop|check" >&2
    exit 2
    ;;
esac
