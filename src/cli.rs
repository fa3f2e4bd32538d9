//! A table-driven command-line and environment parser: every option is declared once, with
//! its flag, environment variable, default and help, and `--help` is printed from that table.

use std::collections::HashMap;

/// One option. `value: None` makes it a switch (`--flag`, env `1`/`true`/`yes`).
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    pub flag: &'static str,
    pub env: &'static str,
    pub value: Option<&'static str>,
    pub default: &'static str,
    pub help: &'static str,
}

/// What the command line asked for.
#[derive(Debug)]
pub enum Outcome {
    Run(Parsed),
    Help,
    Version,
}

/// Option values by flag: environment first, then flags override.
#[derive(Debug, Default, Clone)]
pub struct Parsed {
    values: HashMap<&'static str, String>,
}

impl Parsed {
    pub fn get(&self, flag: &str) -> Option<&str> {
        self.values
            .get(flag)
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    pub fn switch(&self, flag: &str) -> bool {
        self.get(flag).is_some_and(truthy)
    }

    pub fn number<T: std::str::FromStr>(&self, flag: &str) -> Result<Option<T>, String> {
        match self.get(flag) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("{flag}: {v:?} is not a valid number")),
        }
    }
}

pub fn truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// Parse `args` (without the program name) and the environment through `env`.
pub fn parse(
    opts: &[Opt],
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Outcome, String> {
    let mut p = Parsed::default();
    for o in opts {
        let v = if o.env.is_empty() { None } else { env(o.env) };
        p.values
            .insert(o.flag, v.unwrap_or_else(|| o.default.to_string()));
    }
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        match a.as_str() {
            "-h" | "--help" => return Ok(Outcome::Help),
            "-V" | "--version" => return Ok(Outcome::Version),
            _ => {}
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a.as_str(), None),
        };
        let Some(o) = opts.iter().find(|o| o.flag == name) else {
            return Err(format!("unknown option {a:?} (see --help)"));
        };
        let value = match (o.value, inline) {
            (None, None) => "1".to_string(),
            (None, Some(v)) => v,
            (Some(_), Some(v)) => v,
            (Some(name), None) => {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| format!("{} needs a value <{name}>", o.flag))?
            }
        };
        p.values.insert(o.flag, value);
        i += 1;
    }
    Ok(Outcome::Run(p))
}

/// What a binary's `main` starts from: this process's flags and environment parsed, with
/// `--help` and `--version` answered and a bad flag reported (exit 2) here.
pub fn parse_or_exit(name: &str, about: &str, opts: &[Opt], footer: &str) -> Parsed {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(opts, &args, &|k| std::env::var(k).ok()) {
        Ok(Outcome::Run(p)) => p,
        Ok(Outcome::Help) => {
            print!(
                "{}",
                help(about, &format!("{name} [OPTIONS]"), opts, footer)
            );
            std::process::exit(0);
        }
        Ok(Outcome::Version) => {
            println!("{name} {}", env!("CARGO_PKG_VERSION"));
            std::process::exit(0);
        }
        Err(e) => fail(name, e, 2),
    }
}

/// The value, or `name: error` on stderr and exit with `code` (2: bad configuration,
/// 1: could not start).
pub fn or_exit<T>(name: &str, r: Result<T, impl std::fmt::Display>, code: i32) -> T {
    r.unwrap_or_else(|e| fail(name, e, code))
}

fn fail(name: &str, e: impl std::fmt::Display, code: i32) -> ! {
    eprintln!("{name}: {e}");
    std::process::exit(code)
}

/// A multi-threaded tokio runtime, or exit 1 with the reason.
pub fn runtime_or_exit(name: &str) -> tokio::runtime::Runtime {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build();
    or_exit(
        name,
        rt.map_err(|e| format!("cannot start the runtime: {e}")),
        1,
    )
}

/// The `--help` text.
pub fn help(about: &str, usage: &str, opts: &[Opt], footer: &str) -> String {
    let mut s = format!(
        "{about}\n\nUsage: {usage}\n\nOptions (each also read from its environment variable; flags win):\n"
    );
    for o in opts {
        let flag = match o.value {
            Some(v) => format!("{} <{v}>", o.flag),
            None => o.flag.to_string(),
        };
        s.push_str(&format!("  {flag}\n"));
        for line in wrap(o.help, 72) {
            s.push_str(&format!("      {line}\n"));
        }
        let mut meta = Vec::new();
        if !o.env.is_empty() {
            meta.push(format!("env {}", o.env));
        }
        if !o.default.is_empty() {
            meta.push(format!("default {}", o.default));
        }
        if !meta.is_empty() {
            s.push_str(&format!("      [{}]\n", meta.join("; ")));
        }
    }
    s.push_str("  -h, --help\n      Print this help.\n  -V, --version\n      Print the version.\n");
    if !footer.is_empty() {
        s.push('\n');
        s.push_str(footer);
        s.push('\n');
    }
    s
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for w in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + w.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTS: [Opt; 2] = [
        Opt {
            flag: "--phase",
            env: "X_PHASE",
            value: Some("A|B|C"),
            default: "A",
            help: "phase",
        },
        Opt {
            flag: "--gui",
            env: "X_GUI",
            value: None,
            default: "",
            help: "gui",
        },
    ];

    #[test]
    fn env_then_flags() {
        let env = |k: &str| (k == "X_PHASE").then(|| "B".to_string());
        let args: Vec<String> = vec!["--gui".into()];
        let Ok(Outcome::Run(p)) = parse(&OPTS, &args, &env) else {
            panic!("parse")
        };
        assert_eq!(p.get("--phase"), Some("B"));
        assert!(p.switch("--gui"));
        let args: Vec<String> = vec!["--phase=C".into()];
        let Ok(Outcome::Run(p)) = parse(&OPTS, &args, &env) else {
            panic!("parse")
        };
        assert_eq!(p.get("--phase"), Some("C"));
        assert!(!p.switch("--gui"));
        assert!(parse(&OPTS, &["--nope".to_string()], &env).is_err());
        assert!(parse(&OPTS, &["--phase".to_string()], &env).is_err());
        assert!(matches!(
            parse(&OPTS, &["-h".to_string()], &env),
            Ok(Outcome::Help)
        ));
    }
}
