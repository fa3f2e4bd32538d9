#!/usr/bin/env bash
# interactive-terminal-mcp container entrypoint (seed 003 §7.3).
#
# Sets the container-bridge defaults, asks the server itself whether the configuration is
# usable (`--check-config`: one validator, the server's, so the two never disagree), prints
# its diagnostics on stderr, then execs the MCP server on stdio. A bad bridge value does not
# stop the server: headless commands still work, and interactive requests answer
# PM_TERM_INVALID_MODE with the same diagnostic. A value the server itself refuses at start
# (PM_RUNNING_IN_CONTAINER, PM_TERM_ADAPTER_MODE, …) stops here with status 2.
#
#   entrypoint.sh [server args...]   check, then exec the server
#   entrypoint.sh --check-env        check only: 0 usable, 1 interactive refused, 2 no start
set -u

SERVER_BIN="${PM_TERM_SERVER_BIN:-/usr/local/bin/interactive-terminal-mcp}"

diag() { printf 'entrypoint: %s\n' "$*" >&2; }

# Defaults without host-specific aliases; the server itself tries
# host.containers.internal, then host.docker.internal, after any override.
export PM_RUNNING_IN_CONTAINER="${PM_RUNNING_IN_CONTAINER:-true}"
export PM_TERM_ADAPTER_MODE="${PM_TERM_ADAPTER_MODE:-container_bridge}"
export PM_INTERACTIVE_TERMINAL_HOST_PORT="${PM_INTERACTIVE_TERMINAL_HOST_PORT:-45459}"
export PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS="${PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS:-3000}"
export PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS="${PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS:-30000}"

if [ ! -x "$SERVER_BIN" ]; then
  diag "ERROR: $SERVER_BIN is missing or not executable"
  exit 127
fi

if [ "${1:-}" = "--check-env" ]; then
  exec "$SERVER_BIN" --check-config
fi

# The check's verdict goes to stderr; stdout stays the MCP channel.
"$SERVER_BIN" --check-config "$@" </dev/null >&2
status=$?
if [ "$status" -ge 2 ]; then
  diag "the server refuses to start with these values; fix them and start the container again"
  exit "$status"
fi
exec "$SERVER_BIN" "$@"
