//! `memory_terminal`: strict allowlisted headless execution (docs/policy.md). The same
//! request, execution, output and identity model as headless `memory_terminal_interactive`,
//! but only for commands on the allowlist, and never a terminal.

use serde_json::{Value, json};

use super::Service;
use super::approval::NoElicitor;
use super::wait::Progress;
use crate::contract::{Action, Envelope, ErrorCode, Mode, Request, TermError, response};

/// What an agent should do with a command this tool refuses: it is not destructive, only
/// outside the allowlist, so the way forward is the other tool (where policy and approval
/// decide), not a different command.
const STRICT_REFUSAL_HINT: &str = "The command is not on memory_terminal's strict allowlist (details.allowed lists it). Run it with memory_terminal_interactive instead, where the operator's policy and approvals decide; do not retry it here.";

/// The intent of the bare-command shortcut.
const SHORTCUT_INTENT: &str = "execute_command";

/// The variable the shell finds programs by.
const PATH: &str = "PATH";

/// The server's `PATH` without its relative entries, when it has any (`.`, an empty entry,
/// `bin`): those are looked up from the request's working directory, where a file named like
/// an allowlisted program would run in its place. `None` when every entry is absolute.
fn absolute_search_path() -> Option<String> {
    let path = std::env::var_os(PATH)?;
    let all: Vec<std::path::PathBuf> = std::env::split_paths(&path).collect();
    let kept: Vec<&std::path::PathBuf> = all.iter().filter(|d| d.is_absolute()).collect();
    if kept.len() == all.len() {
        return None;
    }
    let joined = std::env::join_paths(kept).ok()?;
    Some(joined.to_string_lossy().into_owned())
}

/// On Windows a headless line goes to cmd.exe, which reads quotes, `&` and `%` otherwise
/// than the POSIX reading the allowlist judged (`echo 'x & calc'` is one `echo` word to the
/// allowlist, two commands to cmd): an admitted line runs as its program and arguments,
/// with no shell. And Windows programs take `/x` as their options (`sort /o FILE` writes
/// FILE), which the allowlist's option tables do not know: such a word is refused.
#[cfg(windows)]
fn without_a_shell(req: &mut Request) -> Result<(), String> {
    if let Some(word) = req
        .execution
        .args
        .iter()
        .flatten()
        .find(|a| a.starts_with('/'))
    {
        return Err(format!(
            "{word}: Windows programs read a word starting with / as an option, and this \
             allowlist does not know theirs"
        ));
    }
    if req.execution.args.is_some() {
        return Ok(());
    }
    let command = req.execution.command.clone().unwrap_or_default();
    let mut words = shell_words::split(&command).map_err(|e| format!("{command}: {e}"))?;
    if words.is_empty() {
        return Err("an empty command".into());
    }
    let program = words.remove(0);
    req.execution.command = Some(program);
    req.execution.args = Some(words);
    without_a_shell(req)
}

/// Refuse a repository whose git configuration names a program a reading command would run
/// and that no override switches off (`policy::strict_git`): a filter, a diff driver, an
/// external diff. Read with git itself (includes followed), in the request's directory;
/// listing the configuration runs nothing of it.
async fn git_configuration_runs_nothing(cwd: Option<&str>) -> Result<(), String> {
    let dir = crate::headless::resolve_cwd(cwd).map_err(|e| e.to_string())?;
    // Found on the operator's absolute PATH entries only: the directory may hold a `git`
    // the agent wrote.
    let git = crate::program::which("git").ok_or("git is not on the operator's PATH")?;
    let mut cmd = tokio::process::Command::new(git);
    cmd.args(["config", "--list", "--name-only", "--includes", "-z"])
        .current_dir(&dir)
        .stdin(std::process::Stdio::null());
    let listed = crate::process::reaper::own_output(cmd);
    let out = match tokio::time::timeout(std::time::Duration::from_secs(10), listed).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => {
            return Err(format!(
                "git cannot be run to read the repository's configuration: {e}"
            ));
        }
        Err(_) => return Err("reading the repository's git configuration took over 10 s".into()),
    };
    let keys = String::from_utf8_lossy(&out.stdout);
    let named: Vec<&str> = keys
        .split('\0')
        .filter(|k| crate::policy::strict_git::program_key(k))
        .collect();
    if named.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the git configuration here names programs git runs while it reads ({}): the \
         repository's configuration is the agent's to write, so memory_terminal runs git only \
         where it names none; use memory_terminal_interactive, where a person decides",
        named.join(", ")
    ))
}

impl Service {
    /// The refusal of a command or a request this tool does not run: not destructive, only
    /// outside what the strict tool admits.
    fn strict_refusal(&self, req: &Request, command: &str, why: String) -> TermError {
        tracing::info!(trace_id = %req.correlation.trace_id, %command, %why, "strict allowlist refused");
        TermError::new(
            ErrorCode::BlockedDestructive,
            format!("not on the strict allowlist: {why}"),
        )
        .with_hint(None, STRICT_REFUSAL_HINT)
        .with("authorization", json!("blocked"))
        .with("rule", json!("strict_allowlist"))
        .with("command", json!(command))
        .with("reason", json!(why))
        .with(
            "safety_hint",
            json!(crate::policy::safety_hint("strict_allowlist")),
        )
        .with("allowed", json!(self.policy.strict.describe()))
    }

    pub async fn handle_strict(&self, raw: &Value, progress: &dyn Progress) -> Value {
        // A bare {"command": ...} is this tool's documented shortcut for a headless execute:
        // the caller sent no alias, so it is answered as canonical (no alias_applied, no
        // deprecation warning, accepted in every phase).
        let mut raw = raw.clone();
        if let Value::Object(m) = &mut raw
            && !m.contains_key("action")
            && (m.contains_key("command") || m.contains_key("execution"))
        {
            m.insert("action".into(), json!(Action::Execute.as_str()));
            let invocation = m.entry("invocation").or_insert_with(|| json!({}));
            if let Value::Object(inv) = invocation {
                inv.entry("mode")
                    .or_insert_with(|| json!(Mode::Headless.as_str()));
                inv.entry("intent")
                    .or_insert_with(|| json!(SHORTCUT_INTENT));
            }
        }
        let mut req = match self.parse(&raw) {
            Ok(r) => r,
            Err(rej) => return response::failure(&rej.envelope, &rej.error),
        };
        let env = Envelope::from_request(&req);
        if req.mode == Some(Mode::Interactive) {
            let e = TermError::new(
                ErrorCode::InvalidMode,
                "memory_terminal runs headless commands only; use memory_terminal_interactive for terminals",
            )
            .with("mode", json!("interactive"))
            .with("supported", json!(["headless"]));
            return response::failure(&env, &e);
        }
        if req.runtime.unsandboxed == Some(true) {
            let e = TermError::payload(
                "memory_terminal runs inside the operator's sandbox only; ask with \
                 memory_terminal_interactive (a person must approve)",
            )
            .with("field", json!("runtime.unsandboxed"));
            return response::failure(&env, &e);
        }
        if req.action == Action::List {
            req.mode = Some(Mode::Headless);
        }
        if req.action == Action::Execute {
            let command = req.execution.command.clone().unwrap_or_default();
            let admitted = match self
                .policy
                .strict
                .check(&command, req.execution.args.as_deref())
            {
                Ok(admitted) => admitted,
                Err(why) => {
                    return response::failure(&env, &self.strict_refusal(&req, &command, why));
                }
            };
            req.runs_project_code = admitted.runs_project_code;
            #[cfg(windows)]
            if let Err(why) = without_a_shell(&mut req) {
                return response::failure(&env, &self.strict_refusal(&req, &command, why));
            }
            if let Some(refused) = self.refused_env(&req) {
                let name = refused.name;
                let why = match refused.value {
                    Some(why) => {
                        format!("execution.env.{name} may not be set to that value here: {why}")
                    }
                    None => format!(
                        "execution.env.{name} may not be set here: memory_terminal's commands \
                         may be given only data every program reads as data \
                         (details.allowed_env), never a variable that picks the program run or \
                         the configuration it loads"
                    ),
                };
                let e = self
                    .strict_refusal(&req, &command, why)
                    .with("field", json!(format!("execution.env.{name}")))
                    .with("allowed_env", json!(self.policy.env.describe()));
                return response::failure(&env, &e);
            }
            if let Some(path) = absolute_search_path() {
                req.execution
                    .env
                    .get_or_insert_with(Default::default)
                    .insert(PATH.into(), path);
            }
            if admitted.git {
                if let Err(why) = git_configuration_runs_nothing(req.runtime.cwd.as_deref()).await {
                    return response::failure(&env, &self.strict_refusal(&req, &command, why));
                }
                req.execution
                    .env
                    .get_or_insert_with(Default::default)
                    .extend(crate::policy::strict_git::environment());
            }
        }
        self.dispatch(&req, progress, &NoElicitor)
            .await
            .respond(env)
    }
}
