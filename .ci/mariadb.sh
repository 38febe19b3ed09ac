#!/usr/bin/env bash
# Starts (or stops) a throwaway MariaDB server on 127.0.0.1:3307, for the
# loading tests on the third dialect: a fresh data directory under /tmp, the
# user `expand` (password `expand`) owning every database it creates, and the
# database `expand`. Installs Debian's mariadb-server package when it is
# missing. Then: MARIADB_URL=mysql://expand:expand@127.0.0.1:3307/expand
set -euo pipefail
dir=/tmp/fastify-expand-mariadb
port=3307
user=expand
password=expand
database=expand

server_running () { [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; }

stop_server () {
  if server_running; then
    local pid
    pid=$(cat "$dir/pid")
    kill "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
}

case "${1:-start}" in
  start)
    if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      # The package's own service is not wanted: only the throwaway server below runs.
      apt-get install -y -qq --no-install-recommends mariadb-server mariadb-client >/dev/null
    fi
    export PATH="/usr/sbin:$PATH"
    stop_server
    rm -rf "$dir" && mkdir -p "$dir"
    mariadb-install-db --no-defaults --datadir="$dir/data" --user=root \
      --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1
    # No binary log, no durability on commit: a test server, thrown away after the run.
    mariadbd --no-defaults --datadir="$dir/data" --port="$port" --bind-address=127.0.0.1 \
      --socket="$dir/sock" --pid-file="$dir/pid" --user=root --skip-log-bin \
      --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --skip-name-resolve \
      --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
      --log-error="$dir/log" >/dev/null 2>&1 &
    for _ in $(seq 1 300); do
      [ -S "$dir/sock" ] && mariadb --no-defaults --socket="$dir/sock" -uroot -e 'select 1' >/dev/null 2>&1 && break
      sleep 0.1
    done
    if ! server_running; then tail -n 20 "$dir/log" >&2 || true; echo "MariaDB did not start" >&2; exit 1; fi
    # The tests create (and drop) a database per open: the user may create any.
    mariadb --no-defaults --socket="$dir/sock" -uroot <<SQL
create database if not exists \`$database\`;
create user if not exists '$user'@'127.0.0.1' identified by '$password';
grant all privileges on *.* to '$user'@'127.0.0.1';
flush privileges;
SQL
    echo "MariaDB $(mariadbd --version | awk '{print $3}') on 127.0.0.1:$port"
    ;;
  stop)
    stop_server
    rm -rf "$dir"
    ;;
esac
