#!/usr/bin/env bash
# Starts (restarts, stops) a throwaway hot standby of the PostgreSQL cluster that
# .ci/postgres.sh starts: a copy taken with pg_basebackup, streaming the
# primary's WAL, read-only, on 127.0.0.1:5434, trust auth, for the read
# replica tests (REPLICA_URL=postgres://postgres@127.0.0.1:5434/postgres).
#
# The primary is never stopped, restarted or reconfigured: what a standby
# needs of it is in initdb's defaults, which .ci/postgres.sh keeps
# (wal_level = replica, max_wal_senders = 10, and `host replication all
# 127.0.0.1/32 trust` in pg_hba.conf); `start` checks them and says which is
# missing. No replication slot is made, so a standby the script forgot can
# never make the primary keep WAL; a standby that falls further behind than the
# WAL the primary still holds stops replaying (start it again).
#
# Environment (defaults for the 5433 cluster): PRIMARY_PORT (5433),
# REPLICA_PORT (5434), REPLICA_DIR (/tmp/fastify-expand-pg-replica: removed by
# start and stop; the socket is there too). `npm run cluster` makes its own
# standby with this script, with its own ports and directory.
set -euo pipefail
primary_port=${PRIMARY_PORT:-5433}
port=${REPLICA_PORT:-5434}
dir=${REPLICA_DIR:-/tmp/fastify-expand-pg-replica}

bin_dir () { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
as_postgres () { (cd / && su postgres -c "$1"); }
on_primary () { as_postgres "$bin/psql -X -h 127.0.0.1 -p $primary_port -U postgres -d postgres -Atc \"$1\""; }
on_replica () { as_postgres "$bin/psql -X -h 127.0.0.1 -p $port -U postgres -d postgres -Atc \"$1\""; }

stop_replica () {
  if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
    as_postgres "$bin/pg_ctl -D $dir/data -m fast -w stop" >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

bin=$(bin_dir || true)
case "${1:-start}" in
  start)
    [ -n "$bin" ] || { echo "PostgreSQL is not installed (bash .ci/postgres.sh start installs it)"; exit 1; }
    on_primary "select 1" >/dev/null || { echo "no primary on 127.0.0.1:$primary_port"; exit 1; }
    wal_level=$(on_primary "show wal_level")
    senders=$(on_primary "show max_wal_senders")
    if [ "$wal_level" = minimal ] || [ "$senders" = 0 ]; then
      echo "the primary on 127.0.0.1:$primary_port cannot stream: wal_level = $wal_level, max_wal_senders = $senders"; exit 1
    fi
    stop_replica
    mkdir -p "$dir" && chown postgres "$dir"
    # -R writes standby.signal and primary_conninfo; -X stream copies the WAL written during the copy.
    as_postgres "$bin/pg_basebackup -h 127.0.0.1 -p $primary_port -U postgres -D $dir/data -X stream -R -c fast" \
      || { echo "pg_basebackup from 127.0.0.1:$primary_port failed (pg_hba.conf needs 'host replication all 127.0.0.1/32 trust')"; exit 1; }
    as_postgres "$bin/pg_ctl -D $dir/data -o '-p $port -k $dir -c listen_addresses=127.0.0.1 -c hot_standby=on -c fsync=off -c synchronous_commit=off -c full_page_writes=off' -l $dir/log -w start" >/dev/null \
      || { tail -n 20 "$dir/log"; echo "the standby did not start"; exit 1; }
    for _ in $(seq 1 100); do
      [ "$(on_replica "select status from pg_stat_wal_receiver" 2>/dev/null)" = streaming ] && break
      sleep 0.1
    done
    if [ "$(on_replica "select status from pg_stat_wal_receiver")" != streaming ] || [ "$(on_replica "select pg_is_in_recovery()")" != t ]; then
      tail -n 20 "$dir/log"; echo "the standby on 127.0.0.1:$port is not streaming from 127.0.0.1:$primary_port"; stop_replica; exit 1
    fi
    echo "PostgreSQL hot standby of 127.0.0.1:$primary_port on 127.0.0.1:$port (streaming)"
    ;;
  restart)
    # pg_ctl restart starts the server again with the options it was started with (postmaster.opts).
    as_postgres "$bin/pg_ctl -D $dir/data -l $dir/log -m fast -w restart" >/dev/null \
      || { tail -n 20 "$dir/log"; echo "the standby did not start again"; exit 1; }
    ;;
  stop)
    stop_replica
    ;;
  *)
    echo "usage: $0 start|restart|stop"; exit 2
    ;;
esac
