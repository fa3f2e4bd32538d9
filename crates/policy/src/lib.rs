//! Authorization of every command before it runs (docs/policy.md): `allowed`,
//! `allowed_with_warning` or `blocked`, decided on the parsed commands — every command in
//! the line, through wrappers, chains, subshells and substitutions — never on substrings.
//!
//! The operator configures the policy (a JSON file and/or environment variables); nothing
//! an agent sends can change it.

mod consoles;
mod embedded;
pub mod env;
mod expansion;
mod fish_escapes;
mod fish_names;
mod getopt;
mod git_runs;
mod git_settings;
mod inline;
mod inline_literals;
mod inline_words;
pub mod lex;
pub mod limits;
mod other_shells;
mod printed;
mod recent;
mod repl;
mod repl_env;
mod repl_files;
mod repl_runners;
mod repl_tokens;
mod repl_trees;
pub mod rules;
mod runner_names;
mod runners;
mod safety_hint;
mod statements;
mod stdin;
pub use statements::open_statement;
pub mod strict;
pub mod strict_build;
pub mod strict_git;
pub mod strict_options;
mod string_escapes;
mod tool_settings;
mod typed;
mod variables;
mod zsh_code;
pub use safety_hint::safety_hint;
pub use typed::unseen_line;
pub(crate) mod walk;
pub mod wrappers;
mod written;

use std::path::Path;

use serde::Deserialize;

use rules::{Finding, Severity};
use wrappers::basename;

/// The policy's verdict on a command line; the answers carry it as it is
/// (`result.authorization`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Authorization {
    Allowed,
    AllowedWithWarning,
    Blocked,
}

impl Authorization {
    pub fn as_str(self) -> &'static str {
        match self {
            Authorization::Allowed => "allowed",
            Authorization::AllowedWithWarning => "allowed_with_warning",
            Authorization::Blocked => "blocked",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Decision {
    pub authorization: Authorization,
    pub findings: Vec<Finding>,
}

impl Decision {
    /// The verdict of `findings` (each rule's finding about one command once): blocked by
    /// any block, else warned by any finding.
    fn of(mut findings: Vec<Finding>) -> Decision {
        let mut seen: std::collections::HashSet<(&'static str, String)> = Default::default();
        findings.retain(|f| seen.insert((f.rule, f.command.clone())));
        let authorization = if findings.iter().any(|f| f.severity == Severity::Block) {
            Authorization::Blocked
        } else if findings.is_empty() {
            Authorization::Allowed
        } else {
            Authorization::AllowedWithWarning
        };
        Decision {
            authorization,
            findings,
        }
    }

    /// This decision with `finding` added (its verdict recomputed).
    pub fn with(mut self, finding: Finding) -> Decision {
        self.findings.push(finding);
        Decision::of(self.findings)
    }

    /// The warning for a build or test command of the strict tool: it runs the project's own
    /// code, which the agent may have written.
    pub fn runs_project_code(self, command: &str) -> Decision {
        self.with(Finding {
            severity: Severity::Warn,
            rule: "project_code",
            message: "runs the project's own code (build scripts, tests, the build tool's \
                      project configuration), which the agent may have written"
                .into(),
            command: command.to_string(),
        })
    }

    /// The finding that decided (the first block, else the first warning).
    ///
    /// A command found in an unknown program's arguments decides only when nothing else
    /// was found: another finding on the line (a console's escape judged, another
    /// reading) names what runs more plainly.
    pub fn deciding(&self) -> Option<&Finding> {
        self.findings
            .iter()
            .find(|f| f.severity == Severity::Block)
            .or_else(|| self.findings.iter().find(|f| f.rule != embedded::RULE))
            .or_else(|| self.findings.first())
    }

    /// One line for `result.warning`.
    pub fn warning(&self) -> Option<String> {
        let mut msgs: Vec<String> = Vec::new();
        for f in self
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Warn)
        {
            let m = format!("{} ({}: {})", f.message, f.rule, f.command);
            if !msgs.contains(&m) {
                msgs.push(m);
            }
        }
        (!msgs.is_empty()).then(|| msgs.join("; "))
    }
}

/// When interactive commands wait for a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalMode {
    /// Commands authorized with a warning wait for approval.
    #[default]
    Warned,
    /// Every interactive command waits for approval.
    All,
    /// Nothing waits (warnings are still reported).
    Never,
}

/// The operator's policy file (`PM_TERM_POLICY_FILE`), all fields optional:
/// `{"blocked": ["terraform destroy"], "warned": ["docker system prune"],
///   "allowed": ["git push --force-with-lease"], "strict_allow": ["make test"],
///   "allow_env": ["DATABASE_URL"],
///   "approval": "warned" | "all" | "never", "approval_default": "approve" | "decline"}`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    #[serde(default)]
    pub blocked: Vec<String>,
    #[serde(default)]
    pub warned: Vec<String>,
    #[serde(default)]
    pub allowed: Vec<String>,
    #[serde(default)]
    pub strict_allow: Vec<String>,
    /// Extra names a request may set in `execution.env` (`strict_env` is its older name).
    #[serde(default, alias = "strict_env")]
    pub allow_env: Vec<String>,
    pub approval: Option<String>,
    pub approval_default: Option<String>,
}

/// The operator's settings, before loading.
#[derive(Debug, Clone, Default)]
pub struct PolicyInputs {
    pub file: Option<String>,
    pub blocked: Option<String>,
    pub warned: Option<String>,
    pub allowed: Option<String>,
    pub strict_allow: Option<String>,
    pub allow_env: Option<String>,
    pub approval: Option<String>,
    pub approval_default: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Policy {
    blocked: Vec<Vec<String>>,
    warned: Vec<Vec<String>>,
    allowed: Vec<Vec<String>>,
    pub strict: strict::Allowlist,
    /// What a request's environment may set (both tools).
    pub env: env::EnvAllowlist,
}

/// Working directories a line is judged in at most (`cd` after `cd`).
const MAX_PLACES: usize = 8;

/// Patterns of one line looked up in their directories; the rest count as matching.
const MAX_GLOB_LOOKUPS: usize = 32;

/// The operator's rules as words: `terraform destroy` is `["terraform", "destroy"]`.
fn parse_rules(items: &[String]) -> Result<Vec<Vec<String>>, String> {
    items
        .iter()
        .filter(|s| !s.trim().is_empty())
        .map(|s| shell_words::split(s).map_err(|e| format!("policy rule {s:?}: {e}")))
        .collect()
}

fn split_list(v: &Option<String>) -> Vec<String> {
    v.as_deref()
        .map(|s| {
            s.split(';')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `argv` starts with the words of an operator's rule (`terraform destroy`).
fn matches_rule(argv: &[String], rule: &[String]) -> bool {
    !rule.is_empty()
        && argv.len() >= rule.len()
        && basename(&argv[0]) == basename(&rule[0])
        && argv[1..rule.len()] == rule[1..]
}

/// When a person is asked, and what happens with nobody to ask: the operator's settings of
/// the same policy file and variables, read by the approval service only (the policy
/// judges commands; it never asks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Approvals {
    pub mode: ApprovalMode,
    /// With no person and no elicitation: approve (true) or decline.
    pub approve_by_default: bool,
}

impl Default for Approvals {
    fn default() -> Self {
        Approvals {
            mode: ApprovalMode::Warned,
            approve_by_default: false,
        }
    }
}

/// The operator's policy file and variables, read once: the rules commands are judged by,
/// and the approval settings.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub policy: Policy,
    pub approvals: Approvals,
}

impl Policy {
    pub fn load(inputs: &PolicyInputs) -> Result<Loaded, String> {
        let file: PolicyFile = match &inputs.file {
            Some(path) => {
                let text = std::fs::read_to_string(Path::new(path))
                    .map_err(|e| format!("policy file {path}: {e}"))?;
                serde_json::from_str(&text).map_err(|e| format!("policy file {path}: {e}"))?
            }
            None => PolicyFile::default(),
        };
        let mut blocked = file.blocked.clone();
        blocked.extend(split_list(&inputs.blocked));
        let mut warned = file.warned.clone();
        warned.extend(split_list(&inputs.warned));
        let mut allowed = file.allowed.clone();
        allowed.extend(split_list(&inputs.allowed));
        let mut strict_extra = file.strict_allow.clone();
        strict_extra.extend(split_list(&inputs.strict_allow));
        let mut env_extra = file.allow_env.clone();
        env_extra.extend(split_list(&inputs.allow_env));
        let approval = match inputs
            .approval
            .clone()
            .or(file.approval)
            .as_deref()
            .map(str::trim)
        {
            None | Some("") | Some("warned") => ApprovalMode::Warned,
            Some("all") => ApprovalMode::All,
            Some("never") => ApprovalMode::Never,
            Some(o) => return Err(format!("approval must be warned, all or never, not {o:?}")),
        };
        let approve_by_default = match inputs
            .approval_default
            .clone()
            .or(file.approval_default)
            .as_deref()
            .map(str::trim)
        {
            Some("approve") => true,
            None | Some("") | Some("decline") => false,
            Some(o) => {
                return Err(format!(
                    "approval default must be approve or decline, not {o:?}"
                ));
            }
        };
        Ok(Loaded {
            policy: Policy {
                blocked: parse_rules(&blocked)?,
                warned: parse_rules(&warned)?,
                allowed: parse_rules(&allowed)?,
                strict: strict::Allowlist::with_extra(&parse_rules(&strict_extra)?),
                env: env::EnvAllowlist::with_extra(&env_extra),
            },
            approvals: Approvals {
                mode: approval,
                approve_by_default,
            },
        })
    }

    /// A command line for a shell.
    pub fn evaluate(&self, line: &str, cwd: Option<&str>) -> Decision {
        let _budget = rules::globs::Budget::start();
        let mut findings: Vec<Finding> = Vec::new();
        if let Some(f) = rules::check_fork_bomb(line) {
            findings.push(f);
        }
        // The Windows reading's findings go last: where both readings block (`rm -r ~`), the
        // POSIX rule's reason is what a POSIX shell's user is told.
        let mut windows = rules::check_windows(line);
        if let Some(script) = rules::powershell_script(line) {
            windows.extend(rules::check_windows(&script));
        }
        let walk::Found {
            runs: commands,
            mut errors,
            powershell,
            opaque,
            mut computed,
            code_env,
            globbed,
            too_complex,
            reads,
            nested_lines,
        } = walk::all_commands(line);
        for (path, argv) in &reads {
            findings.extend(rules::check_read(path, argv, cwd));
        }
        if let Some(why) = too_complex.first() {
            findings.push(Finding {
                severity: Severity::Block,
                rule: "too_complex",
                message: format!("the command line cannot be judged: {why}"),
                command: line.chars().take(200).collect(),
            });
        }
        if rules::looks_like_powershell(line) {
            // PowerShell syntax (backslash paths) is not a POSIX parsing problem.
            errors.clear();
        }
        for p in &powershell {
            findings.extend(rules::check_windows(p));
        }
        // The working directories the line may be in as it moves (`cd .git && … >> config`
        // writes the repository's configuration): every one a `cd` may have led to, since a
        // `cd` in a subshell or a substitution does not move what follows it — judging only
        // the last would let `(cd /tmp); rm -rf *` run in `/` as a deletion in /tmp.
        // Unknown (None) after a `cd` to a computed place.
        let mut places: Vec<Option<String>> = vec![cwd.map(str::to_string)];
        for (i, walk::Run { argv, redirects }) in commands.iter().enumerate() {
            let here = places.clone();
            for from in &here {
                if let Some(to) = rules::moved_to(argv, from.as_deref()) {
                    // A line that moves about without end is judged as being anywhere: one
                    // unknown place, kept once (pushed again for every place, a line of 20
                    // `cd`s doubled the list at each and took minutes to judge).
                    let to = if places.len() < MAX_PLACES { to } else { None };
                    if !places.contains(&to) {
                        places.push(to);
                    }
                }
            }
            if self.allowed.iter().any(|p| matches_rule(argv, p)) {
                continue;
            }
            if let Some(p) = self.blocked.iter().find(|p| matches_rule(argv, p)) {
                findings.push(Finding {
                    severity: Severity::Block,
                    rule: "operator_blocked",
                    message: format!("blocked by the operator's rule {:?}", shell_words::join(p)),
                    command: shell_words::join(argv),
                });
                continue;
            }
            if let Some(p) = self.warned.iter().find(|p| matches_rule(argv, p)) {
                findings.push(Finding {
                    severity: Severity::Warn,
                    rule: "operator_warned",
                    message: format!("flagged by the operator's rule {:?}", shell_words::join(p)),
                    command: shell_words::join(argv),
                });
            }
            // `stty raw` with the modes put back later in the line (`old=$(stty -g); stty
            // raw -echo; read …; stty "$old"`) leaves no later command without Ctrl-C.
            // The settings put back are those `stty -g` printed before it in the line.
            let restored = (rules::stty::stty_signals_off(argv)
                && commands[i + 1..]
                    .iter()
                    .any(|r| rules::stty::stty_restores(&r.argv)))
                || (rules::stty::stty_computed(argv)
                    && rules::stty::restores_only_saved_settings(line));
            for cwd in &here {
                let mut found = rules::check_argv(argv, redirects, cwd.as_deref());
                if restored {
                    found.retain(|f| f.rule != "terminal_state");
                }
                findings.extend(found);
            }
        }
        findings.extend(rules::check_line_shapes(line, &nested_lines, &places));
        for (what, command) in opaque {
            findings.push(Finding {
                severity: Severity::Warn,
                rule: "opaque_script",
                message: format!("{what}: its code cannot be inspected before it runs"),
                command,
            });
        }
        // Each lookup reads a directory: past `MAX_GLOB_LOOKUPS` in one line (a paste of
        // thousands of `ESC [ A` lines, each a pattern), a pattern counts as matching.
        let mut looked = 0usize;
        computed.extend(
            globbed
                .into_iter()
                .filter(|(word, _)| {
                    looked += 1;
                    looked > MAX_GLOB_LOOKUPS || rules::globs::glob_matches(word, cwd)
                })
                .map(|(_, command)| command),
        );
        for (name, command) in code_env {
            findings.push(Finding {
                severity: Severity::Warn,
                rule: "code_in_environment",
                message: format!(
                    "sets {name}, which makes programs run code or changes which program a \
                     name runs: what runs cannot be read from the line"
                ),
                command,
            });
        }
        if let Some(f) = rules::reading::history_expansion(line) {
            findings.push(f);
        }
        for command in computed {
            findings.push(Finding {
                severity: Severity::Warn,
                rule: "computed_command",
                message: "the program to run is computed at run time and cannot be judged first"
                    .into(),
                command,
            });
        }
        if !errors.is_empty() {
            findings.push(Finding {
                severity: Severity::Warn,
                rule: "unparseable",
                message: format!(
                    "the command line could not be fully parsed ({})",
                    errors.join("; ")
                ),
                command: line.chars().take(200).collect(),
            });
        }
        findings.extend(windows);
        findings.extend(self.other_shells(line, cwd));
        // Only a line allowed so far: what its programs' arguments hold may be a command.
        if findings.is_empty() {
            findings.extend(self.embedded_commands(&commands, cwd));
        }
        Decision::of(findings)
    }

    /// A program and its argv, run without a shell.
    pub fn evaluate_argv(&self, program: &str, args: &[String], cwd: Option<&str>) -> Decision {
        let mut words = vec![program.to_string()];
        words.extend(args.iter().cloned());
        self.evaluate(&shell_words::join(words), cwd)
    }

    /// Raw keystrokes for a terminal: every line they would enter is judged, in each reading
    /// of the control keys among them (`typed`), and the most severe verdict stands.
    pub fn evaluate_input(&self, text: &str, cwd: Option<&str>) -> Decision {
        let _budget = rules::globs::Budget::start();
        let readings = typed::readings(text);
        let mut findings: Vec<Finding> = readings
            .iter()
            .flat_map(|r| self.evaluate_in_terminal(r, cwd).findings)
            .collect();
        if typed::rearranges(text) {
            findings.push(Finding {
                severity: Severity::Warn,
                rule: "edited_input",
                message: "the input moves the cursor, recalls history or reinserts text before \
                          it enters a line, so the line it enters cannot be judged from its keys"
                    .into(),
                command: readings[0].chars().take(200).collect(),
            });
        }
        Decision::of(findings)
    }
}

/// A line split into words as the shell would (for the tests of the modules here).
#[cfg(test)]
pub(crate) fn test_words(line: &str) -> Vec<String> {
    shell_words::split(line).unwrap_or_default()
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
