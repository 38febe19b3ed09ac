#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL cluster on 127.0.0.1:5433, trust auth,
# for the loading tests. Installs Debian's postgresql package when it is missing.
set -euo pipefail
dir=/tmp/fastify-expand-pg
port=5433

bin_dir () { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

case "${1:-start}" in
  start)
    if [ -z "$(bin_dir)" ]; then
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq postgresql >/dev/null
    fi
    bin=$(bin_dir)
    id postgres >/dev/null 2>&1 || useradd --system --home "$dir" postgres
    if [ -f "$dir/data/postmaster.pid" ]; then
      su postgres -c "$bin/pg_ctl -D $dir/data -m fast -w stop" >/dev/null 2>&1 || true
    fi
    rm -rf "$dir" && mkdir -p "$dir" && chown postgres "$dir"
    su postgres -c "$bin/initdb -D $dir/data -A trust -U postgres" >/dev/null
    su postgres -c "$bin/pg_ctl -D $dir/data -o '-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off' -l $dir/log -w start" >/dev/null
    echo "PostgreSQL $($bin/postgres --version | awk '{print $3}') on 127.0.0.1:$port"
    ;;
  stop)
    bin=$(bin_dir)
    [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ] && su postgres -c "$bin/pg_ctl -D $dir/data -m fast -w stop" >/dev/null 2>&1 || true
    ;;
esac
