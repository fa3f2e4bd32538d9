<#
.SYNOPSIS
  Run interactive-terminal-mcp in a container, bridged to the interactive-terminal host on
  this machine (seed 003 section 7). Use it as the command of an MCP client's stdio server.

.EXAMPLE
  pwsh ./run-container.ps1 -Token (Get-Content ~/.config/interactive-terminal/token)
#>
param(
  [string]$Image = "interactive-terminal-mcp",
  [ValidateSet("podman", "docker")][string]$Runtime = "podman",
  [int]$HostPort = 45459,
  [string]$HostAlias = "",
  [string]$Token = $env:PM_INTERACTIVE_TERMINAL_TOKEN,
  [string]$Workspace = (Get-Location).Path,
  [int]$ConnectTimeoutMs = 3000,
  [int]$RequestTimeoutMs = 30000,
  [switch]$TraceBridge
)

$ErrorActionPreference = "Stop"

# Preflight: the host service must listen before interactive requests can work.
$reachable = $false
try {
  $client = New-Object System.Net.Sockets.TcpClient
  $task = $client.ConnectAsync("127.0.0.1", $HostPort)
  $reachable = $task.Wait(1500) -and $client.Connected
  $client.Close()
} catch { $reachable = $false }
if (-not $reachable) {
  Write-Warning "Nothing listens on 127.0.0.1:$HostPort. Start 'interactive-terminal' on this machine first; until then interactive requests answer PM_TERM_GUI_UNAVAILABLE (headless commands still work)."
}
if (-not $Token) {
  Write-Warning "No token: pass -Token or set PM_INTERACTIVE_TERMINAL_TOKEN (interactive-terminal generates it at first start and keeps it in ~/.config/interactive-terminal/token)."
}

$runArgs = @("run", "-i", "--rm")
# Host alias mapping: both well-known names point at the host gateway.
if ($Runtime -eq "docker") {
  $runArgs += @("--add-host", "host.docker.internal:host-gateway", "--add-host", "host.containers.internal:host-gateway")
} else {
  $runArgs += @("--add-host", "host.docker.internal:host-gateway")
}
$runArgs += @(
  "-e", "PM_RUNNING_IN_CONTAINER=true",
  "-e", "PM_TERM_ADAPTER_MODE=container_bridge",
  "-e", "PM_INTERACTIVE_TERMINAL_HOST_PORT=$HostPort",
  "-e", "PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS=$ConnectTimeoutMs",
  "-e", "PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS=$RequestTimeoutMs",
  "-e", "PM_INTERACTIVE_TERMINAL_TOKEN=$Token"
)
if ($HostAlias) { $runArgs += @("-e", "PM_INTERACTIVE_TERMINAL_HOST_ALIAS=$HostAlias") }
if ($TraceBridge) { $runArgs += @("-e", "PM_INTERACTIVE_TERMINAL_TRACE_BRIDGE=1") }
# Pass through any other PM_* overrides set in this shell.
Get-ChildItem env: | Where-Object { $_.Name -like "PM_TERM_*" -and $_.Name -ne "PM_TERM_ADAPTER_MODE" } | ForEach-Object {
  $runArgs += @("-e", "$($_.Name)=$($_.Value)")
}
$runArgs += @("-v", "${Workspace}:/workspace", "-w", "/workspace", $Image)

& $Runtime @runArgs
exit $LASTEXITCODE
