#!/usr/bin/env bash
# devstack plugin entry point for nova-drs (see devstack/README.md).
# devstack sources this file with the phase as arguments: $1 = stack |
# unstack | clean, $2 = pre-install | install | post-config | extra | test-config.
# The work is done by the functions in lib/nova-drs.sh, which also run
# outside devstack through lib/shim.sh (tests/integration/cloud.py).

# shellcheck source=devstack/lib/nova-drs.sh
source "$NOVA_DRS_DIR/devstack/lib/nova-drs.sh"

if [[ "$1" == "stack" ]]; then
    case "$2" in
        install)
            echo_summary "Installing nova-drs"
            install_nova_drs
            ;;
        post-config)
            # nova.conf and api-paste.ini exist; nova services are not started yet.
            echo_summary "Configuring nova-drs"
            configure_nova_drs
            init_nova_drs
            ;;
        extra)
            echo_summary "Starting nova-drs"
            start_nova_drs
            ;;
    esac
fi

if [[ "$1" == "unstack" ]]; then
    stop_nova_drs
fi

if [[ "$1" == "clean" ]]; then
    stop_nova_drs
    cleanup_nova_drs
fi
