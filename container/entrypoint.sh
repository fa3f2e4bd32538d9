#!/usr/bin/env bash
# interactive-terminal-mcp container entrypoint (seed 003 §7.3).
#
# Validates and exports the container-bridge environment, prints a diagnostic for every
# missing or malformed value, then execs the MCP server on stdio. A bad bridge value does
# not stop the server: headless commands still work, and interactive requests answer
# PM_TERM_INVALID_MODE with the same diagnostic. A value the server itself refuses at start
# (PM_RUNNING_IN_CONTAINER, PM_TERM_ADAPTER_MODE) stops here with status 2.
#
#   entrypoint.sh [server args...]   validate, export, exec the server
#   entrypoint.sh --check-env        validate only; exit 1 when something is wrong
set -u

SERVER_BIN="${PM_TERM_SERVER_BIN:-/usr/local/bin/interactive-terminal-mcp}"
problems=0
fatal=0

diag() { printf 'entrypoint: %s\n' "$*" >&2; }
bad() { diag "ERROR: $*"; problems=$((problems + 1)); }
warn() { diag "warning: $*"; }

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }
# Host names, IPv4 and bracketed IPv6 ("]" and "[" lead the bracket expression).
host_re='^[][A-Za-z0-9._:-]+$'
is_host() { [[ "$1" =~ $host_re ]] && [ ${#1} -le 253 ]; }

# Defaults without host-specific aliases; the server itself tries
# host.containers.internal, then host.docker.internal, after any override.
export PM_RUNNING_IN_CONTAINER="${PM_RUNNING_IN_CONTAINER:-true}"
export PM_TERM_ADAPTER_MODE="${PM_TERM_ADAPTER_MODE:-container_bridge}"
export PM_INTERACTIVE_TERMINAL_HOST_PORT="${PM_INTERACTIVE_TERMINAL_HOST_PORT:-45459}"
export PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS="${PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS:-3000}"
export PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS="${PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS:-30000}"

case "$PM_RUNNING_IN_CONTAINER" in
  true|false|1|0|yes|no) ;;
  *) bad "PM_RUNNING_IN_CONTAINER=$PM_RUNNING_IN_CONTAINER: use true or false"; fatal=1 ;;
esac

case "$PM_TERM_ADAPTER_MODE" in
  auto|local|bundled|container_bridge) ;;
  *) bad "PM_TERM_ADAPTER_MODE=$PM_TERM_ADAPTER_MODE: use auto, local, bundled or container_bridge"; fatal=1 ;;
esac

port="$PM_INTERACTIVE_TERMINAL_HOST_PORT"
if ! is_uint "$port" || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
  bad "PM_INTERACTIVE_TERMINAL_HOST_PORT=$port: must be a TCP port (1-65535)"
fi

for name in PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS; do
  value="${!name}"
  if ! is_uint "$value" || [ "$value" -lt 1 ]; then
    bad "$name=$value: must be a positive number of milliseconds"
  fi
done

for name in PM_INTERACTIVE_TERMINAL_HOST_ALIAS PM_INTERACTIVE_TERMINAL_HOST_FALLBACK_ALIAS; do
  value="${!name:-}"
  if [ -n "$value" ]; then
    if is_host "$value"; then
      export "${name?}"
    else
      bad "$name=$value: not a host name or address"
    fi
  fi
done

bridge=false
case "$PM_TERM_ADAPTER_MODE" in
  container_bridge) bridge=true ;;
  auto) case "$PM_RUNNING_IN_CONTAINER" in true|1|yes) bridge=true ;; esac ;;
esac

if $bridge; then
  if [ -z "${PM_INTERACTIVE_TERMINAL_TOKEN:-}" ]; then
    bad "PM_INTERACTIVE_TERMINAL_TOKEN is missing: the host service refuses connections without its token (pass the one interactive-terminal keeps in ~/.config/interactive-terminal/token on the host)"
  else
    export PM_INTERACTIVE_TERMINAL_TOKEN
  fi
  aliases="${PM_INTERACTIVE_TERMINAL_HOST_ALIAS:+$PM_INTERACTIVE_TERMINAL_HOST_ALIAS, }host.containers.internal, ${PM_INTERACTIVE_TERMINAL_HOST_FALLBACK_ALIAS:-host.docker.internal}"
  diag "container bridge: host aliases [$aliases], port $port, connect timeout ${PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS} ms, request timeout ${PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS} ms"
  if [ "${PM_INTERACTIVE_TERMINAL_TRACE_BRIDGE:-}" = 1 ]; then
    export PM_INTERACTIVE_TERMINAL_TRACE_BRIDGE
    diag "bridge telemetry on (PM_INTERACTIVE_TERMINAL_TRACE_BRIDGE=1)"
  fi
fi

if [ "$problems" -gt 0 ]; then
  diag "$problems problem(s) in the bridge configuration: interactive requests will answer PM_TERM_INVALID_MODE; headless commands still work"
fi

if [ "${1:-}" = "--check-env" ]; then
  [ "$problems" -eq 0 ] && diag "configuration ok"
  [ "$problems" -eq 0 ]
  exit $?
fi

if [ "$fatal" -ne 0 ]; then
  diag "the server refuses to start with these values; fix them and start the container again"
  exit 2
fi

if [ ! -x "$SERVER_BIN" ]; then
  diag "ERROR: $SERVER_BIN is missing or not executable"
  exit 127
fi
exec "$SERVER_BIN" "$@"
