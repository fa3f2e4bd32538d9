<#
.SYNOPSIS
  Run interactive-terminal-mcp in a container, bridged to the interactive-terminal host on
  this machine (seed 003 section 7). Use it as the command of an MCP client's stdio server.

.EXAMPLE
  pwsh ./run-container.ps1 -Token (Get-Content ~/.config/interactive-terminal/token)

.EXAMPLE
  # Linux podman (docs/container.md): the host's loopback through slirp4netns.
  pwsh ./run-container.ps1 -Network slirp4netns:allow_host_loopback=true -HostAlias 10.0.2.2
#>
param(
  [string]$Image = "interactive-terminal-mcp",
  [ValidateSet("podman", "docker")][string]$Runtime = "podman",
  [int]$HostPort = 45459,
  [string]$HostAlias = "",
  [string]$FallbackAlias = "",
  [string]$Network = "",
  [string]$Token = $env:PM_INTERACTIVE_TERMINAL_TOKEN,
  [string]$Workspace = (Get-Location).Path,
  [int]$ConnectTimeoutMs = 3000,
  [int]$RequestTimeoutMs = 30000,
  [switch]$TraceBridge
)

$ErrorActionPreference = "Stop"

# This script is an MCP client's stdio server command: stdout is the MCP stream and carries
# nothing but the container's output. Every diagnostic goes to stderr, whatever the host
# (Write-Warning lands on stdout under `pwsh -File` with redirected output).
function Write-Diagnostic([string]$Message) {
  [Console]::Error.WriteLine("run-container: $Message")
}

# Preflight: the host service must listen before interactive requests can work.
$reachable = $false
try {
  $client = New-Object System.Net.Sockets.TcpClient
  $task = $client.ConnectAsync("127.0.0.1", $HostPort)
  $reachable = $task.Wait(1500) -and $client.Connected
  $client.Close()
} catch { $reachable = $false }
if (-not $reachable) {
  Write-Diagnostic "Nothing listens on 127.0.0.1:$HostPort. Start 'interactive-terminal' on this machine first; until then interactive requests answer PM_TERM_GUI_UNAVAILABLE (headless commands still work)."
}
if (-not $Token) {
  Write-Diagnostic "No token: pass -Token or set PM_INTERACTIVE_TERMINAL_TOKEN (interactive-terminal generates it at first start and keeps it in ~/.config/interactive-terminal/token)."
}

$runArgs = @("run", "-i", "--rm")
# How the container reaches the host (docs/container.md): Docker Desktop and podman machine
# provide host.docker.internal / host.containers.internal themselves. Docker on Linux needs the
# name mapped to the gateway (and the host service listening there: interactive-terminal
# --bind); podman before 4.7 refuses host-gateway, so podman gets no mapping: on Linux pass
# -Network slirp4netns:allow_host_loopback=true -HostAlias 10.0.2.2.
if ($Runtime -eq "docker") {
  $runArgs += @("--add-host", "host.docker.internal:host-gateway")
}
if ($Network) { $runArgs += @("--network", $Network) }
$runArgs += @(
  "-e", "PM_RUNNING_IN_CONTAINER=true",
  "-e", "PM_TERM_ADAPTER_MODE=container_bridge",
  "-e", "PM_INTERACTIVE_TERMINAL_HOST_PORT=$HostPort",
  "-e", "PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS=$ConnectTimeoutMs",
  "-e", "PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS=$RequestTimeoutMs"
)
# The token goes by name: the runtime reads its value from this process's environment, so it
# never appears on a command line (where `ps` shows it to every user of the machine).
if ($Token) {
  $env:PM_INTERACTIVE_TERMINAL_TOKEN = $Token
  $runArgs += @("-e", "PM_INTERACTIVE_TERMINAL_TOKEN")
}
if ($HostAlias) { $runArgs += @("-e", "PM_INTERACTIVE_TERMINAL_HOST_ALIAS=$HostAlias") }
if ($FallbackAlias) { $runArgs += @("-e", "PM_INTERACTIVE_TERMINAL_HOST_FALLBACK_ALIAS=$FallbackAlias") }
if ($TraceBridge) { $runArgs += @("-e", "PM_INTERACTIVE_TERMINAL_TRACE_BRIDGE=1") }
# Pass through any other PM_TERM_* overrides set in this shell, by name as well.
Get-ChildItem env: | Where-Object { $_.Name -like "PM_TERM_*" -and $_.Name -ne "PM_TERM_ADAPTER_MODE" } | ForEach-Object {
  $runArgs += @("-e", $_.Name)
}
# The workspace is /workspace in the container and $Workspace on the host: terminals (which
# run on the host) open there, and answers name it as the container does.
$env:PM_TERM_PATH_MAP = "/workspace=$Workspace"
$runArgs += @("-e", "PM_TERM_PATH_MAP")
$runArgs += @("-v", "${Workspace}:/workspace", "-w", "/workspace", $Image)

& $Runtime @runArgs
exit $LASTEXITCODE
