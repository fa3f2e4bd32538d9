//! The names of the calls that hand a command to the system or delete files, in the
//! languages a REPL's line or an interpreter's inline program may be written in: what
//! `inline` reads literals given to, and what `repl` asks about when they are given
//! anything else.

/// Calls whose string argument is a shell command line (or, as a list, an argv).
pub(crate) const SHELL_CALLS: &[&str] = &[
    "system",
    "popen",
    "popen2",
    "popen3",
    "exec",
    "execsync",
    "execfile",
    "execfilesync",
    "spawn",
    "spawnsync",
    "run",
    "call",
    "check_call",
    "check_output",
    "getoutput",
    "getstatusoutput",
    "capture2",
    "capture2e",
    "capture3",
    "shell_exec",
    "passthru",
    "proc_open",
    "qx",
    "execvp",
    "execv",
    "execve",
    "execvpe",
    "execl",
    "execle",
    "execlp",
    "spawnl",
    "spawnlp",
    "spawnv",
    "spawnve",
    "spawnvp",
    "posix_spawn",
    "posix_spawnp",
    // Lua's `os.execute`; a database cursor's SQL read as a shell line names no program.
    "execute",
    // Java's `new ProcessBuilder("rm", "-rf", "/")`, Go's `exec.Command("rm", …)`,
    // Elixir's `System.cmd("rm", […])`, Erlang's `os:cmd("…")`, Emacs Lisp's
    // `(shell-command "…")`, Common Lisp's `(uiop:run-program "…")`.
    "processbuilder",
    "command",
    "cmd",
    "program",
    // MATLAB's.
    "dos",
];

/// Other languages' and libraries' runners, named alike at a REPL's prompt and in inline
/// code: Python's asyncio, Node's execa, Octave's and MATLAB's `unix`, PHP's
/// `pcntl_exec(PATH, [ARGS])`, R's `system2(CMD, ARGS)`.
pub(crate) const OTHER_RUNNERS: &[&str] = &[
    "create_subprocess_exec",
    "create_subprocess_shell",
    "subprocess_exec",
    "subprocess_shell",
    "execa",
    "execasync",
    "execacommand",
    "execacommandsync",
    "unix",
    "pcntl_exec",
    "system2",
];

/// Calls that delete one file: judged as `rm PATH`.
pub(crate) const FILE_DELETES: &[&str] = &["remove", "unlink", "unlinksync", "delete"];

/// Calls that delete a directory tree: judged as `rm -rf PATH`.
pub(crate) const TREE_DELETES: &[&str] = &[
    "rmtree",
    "rm_rf",
    "rm_r",
    "remove_tree",
    "remove_dir_all",
    "rmsync",
    "rimraf",
    "remove_entry_secure",
    // Ruby's `FileUtils.remove_dir` and `remove_entry`, Go's `os.RemoveAll`.
    "remove_dir",
    "remove_entry",
    "removeall",
    // Haskell's `System.Directory`.
    "removedirectoryrecursive",
    "removepathforcibly",
];
