#!/usr/bin/env bash
# nova-drs install/config/start functions for devstack/plugin.sh.
#
# Only devstack helpers are used (iniset, iniget, inidelete,
# is_service_enabled, run_process, stop_process, pip_install,
# recreate_database, drop_database, database_connection_url, die), so the
# same functions also run outside devstack with devstack/lib/shim.sh
# providing those helpers: that is how tests/integration/cloud.py
# configures its mini-cloud.
#
# Variables (devstack/settings gives the devstack defaults):
#   NOVA_DRS_DIR          the nova-drs checkout
#   NOVA_CONF             nova.conf of every nova service
#   NOVA_API_PASTE_INI    nova-api's api-paste.ini
#   NOVA_DRS_CONF_DIR     /etc/nova-drs: the daemon's own file (credentials)
#   NOVA_DRS_STATE_PATH   [drs] state_path
#   NOVA_DRS_DB_NAME      name of the DRS database
#   NOVA_DRS_BIN_DIR      where nova-drs-manage, nova-loadbalancer live
#   NOVA_DRS_PYTHON       python running nova (gets the monitor .pth)
#   NOVA_DRS_CONSTRAINTS  constraints file for pip
#   NOVA_DRS_AUTH_URL, NOVA_DRS_AUTH_USERNAME, NOVA_DRS_AUTH_PASSWORD,
#   NOVA_DRS_AUTH_PROJECT_NAME, NOVA_DRS_AUTH_DOMAIN_NAME, NOVA_DRS_REGION_NAME
#                         the daemon's [drs_auth] (an admin service user)
#   NOVA_DRS_LB_PERIOD    [loadbalancer] period
#   NOVA_DRS_REQUEST_TIMEOUT  [drs_auth] timeout (seconds per nova/placement request)
#   NOVA_DRS_METRICS_PORT, NOVA_DRS_COLLECTOR_METRICS_PORT
#                         [drs_metrics] port of nova-loadbalancer (its own file)
#                         and of nova-drs-collector (nova.conf); 0: no metrics
#   NOVA_DRS_COLLECTOR_CONF_FILES
#                         space-separated nova config files nova-drs-collector
#                         reads (default: NOVA_CONF); they must give nova's
#                         [database]/[api_database] connections, or the
#                         deployed-with ratios are not recorded

NOVA_DRS_PASTE_FILTER=drs_loadbalancer
NOVA_DRS_PASTE_FACTORY=nova_drs.api.middleware:LoadBalancerMiddleware.factory
NOVA_DRS_PASTE_PIPELINES=(composite:openstack_compute_api_v21
                          composite:openstack_compute_api_v21_legacy_v2_compatible)

_nova_drs_conf_file() {
    echo "${NOVA_DRS_CONF_DIR}/nova-drs.conf"
}

_nova_drs_site_packages() {
    "$NOVA_DRS_PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
}

install_nova_drs() {
    pip_install -c "$NOVA_DRS_CONSTRAINTS" -e "$NOVA_DRS_DIR"
    # nova looks monitors up by module path under nova.compute.monitors.cpu:
    # this .pth installs the import alias for cpu.drs (resource-tracking docs).
    if [[ -f "$NOVA_DRS_DIR/etc/nova-drs/nova_drs-monitor.pth" ]]; then
        cp "$NOVA_DRS_DIR/etc/nova-drs/nova_drs-monitor.pth" "$(_nova_drs_site_packages)/"
    fi
}

# Apply every "key = value" line of etc/nova-drs/nova.conf.drs (the operator
# file the functional tests also apply) to nova.conf; comments are skipped.
_nova_drs_apply_operator_file() {
    local file=$1 target=$2 section='' line key value
    while IFS= read -r line || [[ -n "$line" ]]; do
        line=${line%%$'\r'}
        [[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
        if [[ "$line" =~ ^\[([^]]+)\] ]]; then
            section=${BASH_REMATCH[1]}
            continue
        fi
        [[ "$line" == *=* && -n "$section" ]] || die "$file: cannot read line: $line"
        key=${line%%=*}
        value=${line#*=}
        key=${key//[[:space:]]/}
        value=${value#"${value%%[![:space:]]*}"}
        value=${value%"${value##*[![:space:]]}"}
        iniset "$target" "$section" "$key" "$value"
    done <"$file"
}

# Put drs_loadbalancer right after keystonecontext in nova's v2.1 pipelines.
configure_nova_drs_api_paste() {
    local paste=$1 pipeline current
    [[ -f "$paste" ]] || die "nova-drs: $paste not found (NOVA_API_PASTE_INI)"
    for pipeline in "${NOVA_DRS_PASTE_PIPELINES[@]}"; do
        current=$(iniget "$paste" "$pipeline" keystone)
        [[ -n "$current" ]] || die "nova-drs: no [$pipeline] keystone pipeline in $paste"
        [[ " $current " == *" keystonecontext "* ]] ||
            die "nova-drs: no keystonecontext in [$pipeline] of $paste"
        [[ " $current " == *" $NOVA_DRS_PASTE_FILTER "* ]] && continue
        iniset "$paste" "$pipeline" keystone \
            "$(echo " $current " | sed -e "s/ keystonecontext / keystonecontext $NOVA_DRS_PASTE_FILTER /" \
                                       -e 's/^ //' -e 's/ $//')"
    done
    iniset "$paste" "filter:$NOVA_DRS_PASTE_FILTER" paste.filter_factory "$NOVA_DRS_PASTE_FACTORY"
}

unconfigure_nova_drs_api_paste() {
    local paste=$1 pipeline current
    [[ -f "$paste" ]] || return 0
    for pipeline in "${NOVA_DRS_PASTE_PIPELINES[@]}"; do
        current=$(iniget "$paste" "$pipeline" keystone)
        [[ " $current " == *" $NOVA_DRS_PASTE_FILTER "* ]] || continue
        iniset "$paste" "$pipeline" keystone \
            "$(echo " $current " | sed -e "s/ $NOVA_DRS_PASTE_FILTER / /" -e 's/^ //' -e 's/ $//')"
    done
    sed -i -e "/^\\[filter:$NOVA_DRS_PASTE_FILTER\\]/,/^\\[/ { /^\\[filter:$NOVA_DRS_PASTE_FILTER\\]/ d; /^\\[/ !d }" \
        "$paste"
}

configure_nova_drs() {
    local drs_conf
    drs_conf=$(_nova_drs_conf_file)
    mkdir -p "$NOVA_DRS_CONF_DIR" "$NOVA_DRS_STATE_PATH"
    _nova_drs_apply_operator_file "$NOVA_DRS_DIR/etc/nova-drs/nova.conf.drs" "$NOVA_CONF"
    iniset "$NOVA_CONF" drs state_path "$NOVA_DRS_STATE_PATH"
    iniset "$NOVA_CONF" drs_database connection "$(database_connection_url "$NOVA_DRS_DB_NAME")"
    configure_nova_drs_api_paste "$NOVA_API_PASTE_INI"

    # The daemon's credentials: in its own file, read by the daemon only.
    iniset "$drs_conf" loadbalancer period "$NOVA_DRS_LB_PERIOD"
    iniset "$drs_conf" drs_auth auth_type password
    iniset "$drs_conf" drs_auth auth_url "$NOVA_DRS_AUTH_URL"
    iniset "$drs_conf" drs_auth username "$NOVA_DRS_AUTH_USERNAME"
    iniset "$drs_conf" drs_auth password "$NOVA_DRS_AUTH_PASSWORD"
    iniset "$drs_conf" drs_auth project_name "$NOVA_DRS_AUTH_PROJECT_NAME"
    iniset "$drs_conf" drs_auth user_domain_name "$NOVA_DRS_AUTH_DOMAIN_NAME"
    iniset "$drs_conf" drs_auth project_domain_name "$NOVA_DRS_AUTH_DOMAIN_NAME"
    iniset "$drs_conf" drs_auth region_name "$NOVA_DRS_REGION_NAME"
    iniset "$drs_conf" drs_auth timeout "$NOVA_DRS_REQUEST_TIMEOUT"
    # Two processes, two ports: the daemon reads its own file after nova.conf.
    if [[ "${NOVA_DRS_COLLECTOR_METRICS_PORT:-0}" != 0 ]]; then
        iniset "$NOVA_CONF" drs_metrics port "$NOVA_DRS_COLLECTOR_METRICS_PORT"
    fi
    if [[ "${NOVA_DRS_METRICS_PORT:-0}" != 0 ]]; then
        iniset "$drs_conf" drs_metrics port "$NOVA_DRS_METRICS_PORT"
    fi
    chmod 600 "$drs_conf"
    _nova_drs_seal_keys "$drs_conf"
}

# The power-secret key pair (doc/source/trust-model.md): the public key goes
# to nova.conf (nova-api seals BMC passwords with it), the private key only to
# the daemon's own file. Made once; a second stack keeps it.
_nova_drs_seal_keys() {
    local drs_conf=$1 private="$NOVA_DRS_CONF_DIR/power-seal.key" public="$NOVA_DRS_CONF_DIR/power-seal.pub"
    if [[ ! -f "$private" ]]; then
        (umask 077 && openssl genpkey -algorithm X25519 -out "$private") ||
            die "nova-drs: openssl could not make the power-secret key pair"
    fi
    chmod 600 "$private"
    openssl pkey -in "$private" -pubout -out "$public" ||
        die "nova-drs: openssl could not write the power-secret public key"
    iniset "$NOVA_CONF" drs_power seal_public_key_file "$public"
    iniset "$drs_conf" drs_power unseal_private_key_files "$private"
}

init_nova_drs() {
    recreate_database "$NOVA_DRS_DB_NAME"
    "$NOVA_DRS_BIN_DIR/nova-drs-manage" --config-file "$NOVA_CONF" db sync ||
        die "nova-drs: nova-drs-manage db sync failed"
}

start_nova_drs() {
    local drs_conf
    drs_conf=$(_nova_drs_conf_file)
    if is_service_enabled nova-loadbalancer; then
        run_process nova-loadbalancer "$NOVA_DRS_BIN_DIR/nova-loadbalancer --config-file $NOVA_CONF --config-file $drs_conf"
    fi
    if is_service_enabled nova-drs-collector; then
        local conf_args='' file
        for file in ${NOVA_DRS_COLLECTOR_CONF_FILES:-$NOVA_CONF}; do
            conf_args+=" --config-file $file"
        done
        run_process nova-drs-collector "$NOVA_DRS_BIN_DIR/nova-drs-collector$conf_args"
    fi
}

stop_nova_drs() {
    stop_process nova-loadbalancer
    stop_process nova-drs-collector
}

# clean: everything configure/init/install did, in reverse.
cleanup_nova_drs() {
    local section
    unconfigure_nova_drs_api_paste "$NOVA_API_PASTE_INI"
    for section in drs drs_database drs_resources drs_stats drs_auth drs_power; do
        [[ -f "$NOVA_CONF" ]] && sed -i -e "/^\\[$section\\]/,/^\\[/ { /^\\[$section\\]/ d; /^\\[/ !d }" "$NOVA_CONF"
    done
    if [[ -f "$NOVA_CONF" ]]; then
        inidelete "$NOVA_CONF" DEFAULT compute_monitors
        inidelete "$NOVA_CONF" filter_scheduler available_filters
        inidelete "$NOVA_CONF" filter_scheduler enabled_filters
        inidelete "$NOVA_CONF" filter_scheduler weight_classes
        inidelete "$NOVA_CONF" notifications notification_format
        inidelete "$NOVA_CONF" oslo_messaging_notifications driver
    fi
    rm -f "$(_nova_drs_conf_file)" "$NOVA_DRS_CONF_DIR/power-seal.key" \
        "$NOVA_DRS_CONF_DIR/power-seal.pub"
    rm -rf "$NOVA_DRS_STATE_PATH"
    drop_database "$NOVA_DRS_DB_NAME"
    rm -f "$(_nova_drs_site_packages)/nova_drs-monitor.pth"
}
