#!/usr/bin/env bash
# The few devstack helpers devstack/lib/nova-drs.sh uses, for running its
# functions OUTSIDE devstack (the mini-cloud in tests/integration does).
# Same names and arguments as devstack's inc/ini-config, functions and
# lib/database; only the behaviour nova-drs needs. Never sourced by devstack.
#
# Environment read here (all optional):
#   LOGDIR, PIDDIR          where run_process writes <service>.log / .pid
#   ENABLED_SERVICES        comma list for is_service_enabled
#   PIP                     pip command of the target environment
#   DATABASE_TYPE (mysql), DATABASE_USER (root), DATABASE_PASSWORD (''),
#   DATABASE_HOST (127.0.0.1), DATABASE_PORT (3306)

die() {
    echo "ERROR: $*" >&2
    exit 1
}

_ini_escape() {
    # Escape a value for the replacement side of sed's s|||.
    printf '%s' "$1" | sed -e 's/[\\|&]/\\&/g'
}

_ini_section_re() {
    # The [section] header as a basic regular expression.
    printf '^\\[%s\\]' "$(printf '%s' "$1" | sed -e 's/[][\.*^$/]/\\&/g')"
}

ini_has_option() {
    local file=$1 section=$2 option=$3
    local header
    header=$(_ini_section_re "$section")
    sed -n -e "/$header/,/^\\[/ p" "$file" 2>/dev/null |
        grep -q -E "^${option}[[:space:]]*="
}

iniget() {
    local file=$1 section=$2 option=$3
    local header
    header=$(_ini_section_re "$section")
    sed -n -e "/$header/,/^\\[/ { /^${option}[[:space:]]*=/ { s/^${option}[[:space:]]*=[[:space:]]*//; p; q } }" \
        "$file" 2>/dev/null
}

iniset() {
    local file=$1 section=$2 option=$3 value=$4
    local header escaped
    [[ -n "$file" && -n "$section" && -n "$option" ]] || die "iniset: file, section and option needed"
    [[ -e "$file" ]] || touch "$file"
    header=$(_ini_section_re "$section")
    if ! grep -q -e "$header" "$file"; then
        printf '\n[%s]\n' "$section" >>"$file"
    fi
    escaped=$(_ini_escape "$value")
    if ini_has_option "$file" "$section" "$option"; then
        sed -i -e "/$header/,/^\\[/ s|^\\(${option}[[:space:]]*=[[:space:]]*\\).*\$|\\1${escaped}|" "$file"
    else
        sed -i -e "/$header/ a\\
${option} = ${escaped}
" "$file"
    fi
}

inidelete() {
    local file=$1 section=$2 option=$3
    local header
    header=$(_ini_section_re "$section")
    [[ -f "$file" ]] || return 0
    sed -i -e "/$header/,/^\\[/ { /^${option}[[:space:]]*=/ d }" "$file"
}

is_service_enabled() {
    local service
    for service in "$@"; do
        [[ ",${ENABLED_SERVICES:-}," == *",${service},"* ]] && return 0
    done
    return 1
}

pip_install() {
    # shellcheck disable=SC2086  # PIP may be "path/to/python -m pip"
    ${PIP:-pip} install -q "$@"
}

database_connection_url() {
    local db=$1
    local user=${DATABASE_USER:-root} host=${DATABASE_HOST:-127.0.0.1}
    local port=${DATABASE_PORT:-3306}
    [[ "${DATABASE_TYPE:-mysql}" == mysql ]] || die "shim: only DATABASE_TYPE=mysql"
    echo "mysql+pymysql://${user}:${DATABASE_PASSWORD:-}@${host}:${port}/${db}?charset=utf8"
}

_mysql() {
    local -a args=(-u "${DATABASE_USER:-root}" -h "${DATABASE_HOST:-127.0.0.1}"
                   -P "${DATABASE_PORT:-3306}")
    [[ -z "${DATABASE_PASSWORD:-}" ]] || args+=("-p${DATABASE_PASSWORD}")
    command -v mysql >/dev/null || die "shim: the mysql client is not installed"
    mysql "${args[@]}" -e "$1"
}

recreate_database() {
    local db=$1
    _mysql "DROP DATABASE IF EXISTS \`${db}\`; CREATE DATABASE \`${db}\` CHARACTER SET utf8;"
}

drop_database() {
    _mysql "DROP DATABASE IF EXISTS \`$1\`;"
}

run_process() {
    # run_process service "command line": start it in its own session, log to
    # $LOGDIR/<service>.log, its PID in $PIDDIR/<service>.pid.
    local service=$1 command=$2
    local logdir=${LOGDIR:-/tmp} piddir=${PIDDIR:-/tmp}
    mkdir -p "$logdir" "$piddir"
    setsid bash -c "exec $command" </dev/null >>"$logdir/$service.log" 2>&1 &
    echo $! >"$piddir/$service.pid"
}

stop_process() {
    local service=$1
    local pidfile=${PIDDIR:-/tmp}/$service.pid pid i
    [[ -f "$pidfile" ]] || return 0
    pid=$(cat "$pidfile")
    if kill "$pid" 2>/dev/null; then
        for i in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "shim: $service (pid $pid) ignored SIGTERM for ${i}x0.1 s; killing it" >&2
            kill -9 "$pid" 2>/dev/null
        fi
    fi
    rm -f "$pidfile"
}
