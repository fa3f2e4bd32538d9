//! Trees a REPL's line or an interpreter's program deletes, read off the language's own
//! calls (`shutil.rmtree`, `fs.rmSync(…, {recursive: true})`, `FileUtils.rm_rf`), and the
//! home directory as each language names it.

use crate::repl::{MAX_LINE, arguments};
use crate::repl_tokens::{Piece, Token, pieces};

/// Trees deleted at the home directory named by the language's own call (`shutil.rmtree(
/// os.path.expanduser("~"))`, `fs.rmSync(os.homedir(), …)`), and Node's `fs.rm` of a
/// literal path with `recursive`: each as the `rm -rf` it is; a tree the line computes as
/// `rm -rf` of a path that cannot be read.
pub(crate) fn home_deletes(line: &str) -> Vec<String> {
    let ps = pieces(line, MAX_LINE);
    let mut out = Vec::new();
    for (k, p) in ps.iter().enumerate() {
        let Token::Name { path, .. } = &p.token else {
            continue;
        };
        // Elixir's `File.rm_rf!(…)`: the mark ends the name.
        let open = match ps.get(k + 1).map(|p| &p.token) {
            Some(Token::Punct('!')) => k + 2,
            _ => k + 1,
        };
        if ps.get(open).map(|p| &p.token) != Some(&Token::Punct('(')) {
            continue;
        }
        let last = path
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let args = arguments(&ps, open);
        let recursive = args.iter().skip(1).any(|a| {
            a.iter()
                .any(|p| matches!(&p.token, Token::Name { path, .. } if path == "recursive"))
        });
        // Octave's and MATLAB's `rmdir(DIR, "s")`.
        let octave_s = last == "rmdir"
            && matches!(args.get(1).map(|a| a.iter().map(|p| &p.token).collect::<Vec<_>>()).as_deref(),
                Some([Token::Literal { text, .. }]) if text == "s");
        let tree = crate::inline::TREE_DELETES.contains(&last.as_str())
            || octave_s
            || (matches!(
                last.as_str(),
                "rm" | "rmdir" | "rmdirsync" | "unlink" | "remove" | "removesync"
            ) && recursive);
        let Some(first) = args.first().filter(|_| tree) else {
            continue;
        };
        match first
            .iter()
            .map(|p| &p.token)
            .collect::<Vec<_>>()
            .as_slice()
        {
            [
                Token::Literal {
                    text,
                    computed: false,
                },
            ] => {
                out.push(shell_words::join(["rm", "-rf", text.as_str()]));
            }
            _ if is_home(first) => out.push("rm -rf ~".to_string()),
            // A path put together from literals and the home (`Path.home() / 'build'`).
            _ if let Some(path) = crate::repl_files::path_of(first) => {
                out.push(shell_words::join(["rm", "-rf", path.as_str()]));
            }
            // A tree the line computes (`shutil.rmtree(p)`, `rmtree(chr(47))`): which one
            // cannot be read, and a recursive delete of it is asked about.
            _ => out.push("rm -rf '(a path the line computes)'".to_string()),
        }
    }
    out
}

/// Whether an argument is the home directory as a language asks for it.
fn is_home(arg: &[Piece]) -> bool {
    let tokens: Vec<&Token> = arg.iter().map(|p| &p.token).collect();
    is_home_tokens(&tokens)
}

/// Whether these tokens are the home directory as a language asks for it
/// (`os.path.expanduser("~")`, `Path.home()`, `os.homedir()`, `process.env.HOME`, `Dir.home`).
pub(crate) fn is_home_tokens(tokens: &[&Token]) -> bool {
    let text: String = tokens
        .iter()
        .map(|t| match t {
            Token::Name { path, after_call } if *after_call => format!(".{path}"),
            Token::Name { path, .. } => path.clone(),
            Token::Literal { text, .. } => text.clone(),
            Token::Punct(c) => c.to_string(),
        })
        .collect();
    let mut t = text.as_str();
    for wrapper in [
        "str(",
        "String(",
        "Path(",
        "path.resolve(",
        "path.normalize(",
    ] {
        if let Some(inner) = t.strip_prefix(wrapper).and_then(|r| r.strip_suffix(')')) {
            t = inner;
        }
    }
    let t = t.trim_end_matches('/');
    t.ends_with("homedir()")
        || t.ends_with("user_home()")
        || t.ends_with("Path.home()")
        || t == "Dir.home"
        || t.ends_with(".expanduser()")
        || ["expanduser(~", "expand_path(~", "getenv(HOME", "get(HOME"]
            .iter()
            .any(|f| t.ends_with(&format!("{f})")) || t.ends_with(&format!("{f}/)")))
        || t.ends_with("[HOME]")
        || t.ends_with("env.HOME")
        || t == "~"
}
