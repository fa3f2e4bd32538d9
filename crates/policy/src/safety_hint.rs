//! What a blocked command's answer tells the agent to do instead, per rule.

/// What to do instead, per blocking rule (`error.details.safety_hint`).
pub fn safety_hint(rule: &str) -> &'static str {
    match rule {
        "rm_recursive_critical" | "move_critical" => {
            "Never delete or move /, a home directory or a system directory recursively. Name the exact project path to remove (for example ./build)."
        }
        "mkfs" | "device_wipe" | "powershell_format" | "cmd_format" => {
            "Formatting or wiping disks is never run for an agent. A person must do it by hand if it is really intended."
        }
        "dd_device" | "device_write" => {
            "Writing onto a disk device destroys its file systems. Write to a regular file (of=./disk.img) instead."
        }
        "fork_bomb" => "This command would exhaust the machine's processes; it is never run.",
        "power" => "Stopping or restarting the machine is not done for an agent. Ask a person.",
        "recursive_permissions_root" => {
            "Recursive permission changes of / or system directories break the system. Change the permissions of the exact project path instead."
        }
        "kill_all" => "Killing every process is never run. Kill the specific process id instead.",
        "windows_remove_root" => {
            "Never remove a drive root recursively. Name the exact directory to remove."
        }
        "too_complex" => {
            "The command nests shells, evals or substitutions too deeply to be judged before it runs. Split it into simpler commands."
        }
        "operator_blocked" => {
            "The operator of this server blocks this command. Ask them if it is needed."
        }
        "strict_allowlist" => {
            "memory_terminal runs only the commands on its strict allowlist (see error.details.allowed). Use memory_terminal_interactive for anything else."
        }
        _ => "This command is blocked as destructive. Choose a safer command.",
    }
}
