#!/usr/bin/env bash
# Make sure the real services the tests use are listening on loopback:
# MariaDB 3306, PostgreSQL 5432, Redis 6379, RabbitMQ 5672.
# Uses the running ones; starts stopped ones; installs missing ones from
# Debian packages (needs root). Fails with a clear message otherwise.
set -u

listening() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && exec 3>&- 3<&-
}

wait_port() {
    local port=$1 i
    for i in $(seq 1 60); do
        listening "$port" && return 0
        sleep 1
    done
    return 1
}

install_pkgs() {
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
        echo "ensure-services: cannot install $* (need root and apt-get)" >&2
        return 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1; }
}

start_mariadb() {
    command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || install_pkgs mariadb-server || return 1
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- \
        --max-connections="$MARIADB_MAX_CONNECTIONS"
}

# MariaDB's default of 151 connections is too few for the two mini-clouds of
# make integration beside the other tiers (devstack sets 1024 too).
MARIADB_MAX_CONNECTIONS=1024
raise_mariadb_connections() {
    local client
    client=$(command -v mariadb || command -v mysql) || return 0
    "$client" -uroot -h127.0.0.1 -e "SET GLOBAL max_connections =
        GREATEST(@@GLOBAL.max_connections, $MARIADB_MAX_CONNECTIONS)"
}

start_postgresql() {
    ls /etc/postgresql >/dev/null 2>&1 || install_pkgs postgresql || return 1
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
}

start_redis() {
    command -v redis-server >/dev/null || install_pkgs redis-server || return 1
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" \
        --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
}

start_rabbitmq() {
    command -v rabbitmq-server >/dev/null || install_pkgs rabbitmq-server || return 1
    rabbitmq-server -detached
}

status=0
# Tools the power-driver tests run as real protocol peers.
if [ ! -x /usr/sbin/sshd ]; then
    echo "ensure-services: installing openssh-server (sshd peer for the ssh power driver tests)"
    install_pkgs openssh-server || { echo "ensure-services: FAILED to install openssh-server" >&2; status=1; }
fi
for spec in mariadb:3306 postgresql:5432 redis:6379 rabbitmq:5672; do
    name=${spec%%:*}
    port=${spec##*:}
    if listening "$port"; then
        continue
    fi
    echo "ensure-services: $name not listening on 127.0.0.1:$port, starting it"
    if "start_$name" && wait_port "$port"; then
        echo "ensure-services: $name is up"
    else
        echo "ensure-services: FAILED to start $name on 127.0.0.1:$port" >&2
        status=1
    fi
done
if listening 3306 && ! raise_mariadb_connections; then
    echo "ensure-services: FAILED to raise MariaDB's max_connections to $MARIADB_MAX_CONNECTIONS" >&2
    status=1
fi
exit $status
