//! A start-up file given to a program that may write it.
//!
//! The writes the rules model (`files::written_by`: redirections, `tee`, `cp`, `sed -i`,
//! `sort -o`, …) are a list, and every list of writers missed some: `yq -i … ~/.bashrc`,
//! `sd old new ~/.profile` (which edits in place by default), `dos2unix ~/.bashrc`,
//! `ed ~/.bashrc`, `crudini --set ~/.gitconfig …`, `ruby -i -pe … ~/.bashrc`. So the list is
//! turned around: a start-up file, a file in the home's own `bin`, or the home's
//! configuration named in the arguments of any program not known to only read what it is
//! given is warned, as a write would be. What is written there runs later, unjudged.

use super::startup::{home_bin, home_configuration_if_home, is_startup_file};
use super::*;
use crate::wrappers::basename;

/// Programs that only read the files they are given, or whose writes `files::written_by`
/// models exactly (their start-up writes are found there): naming a start-up file to them
/// is reading it. A program here that wrote what it is given would be a hole, so each is
/// either a reader or modeled.
const READS_OR_MODELED: &[&str] = &[
    // Readers.
    "cat",
    "tac",
    "less",
    "more",
    "most",
    "head",
    "tail",
    "wc",
    "nl",
    "cut",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "diff",
    "diff3",
    "cmp",
    "comm",
    "file",
    "stat",
    "ls",
    "dir",
    "vdir",
    "du",
    "tree",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "bat",
    "batcat",
    "readlink",
    "realpath",
    "basename",
    "dirname",
    "test",
    "[",
    "[[",
    "echo",
    "printf",
    "jq",
    "wc",
    "column",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "paste",
    "join",
    "look",
    "shasum",
    "base64",
    "base32",
    "iconv",
    "zcat",
    "bzcat",
    "xzcat",
    "zless",
    "lsattr",
    "getfacl",
    "namei",
    "ldd",
    "objdump",
    "readelf",
    "nm",
    "size",
    "shellcheck",
    "pygmentize",
    // Deletion takes a start-up file away rather than adding to it (the deletion rules
    // judge it); an archive made of it reads it.
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "zip",
    // A shell given its start-up file runs it; that is judged as a script run elsewhere.
    "source",
    ".",
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "fish",
    // Writers whose outputs `files::written_by` (and `into_home`) read exactly.
    "cp",
    "mv",
    "ln",
    "install",
    "rsync",
    "scp",
    "sftp",
    "dd",
    "tee",
    "sponge",
    "truncate",
    "touch",
    "chmod",
    "chown",
    "chgrp",
    "setfacl",
    "sed",
    "gsed",
    "perl",
    "sort",
    "uniq",
    "split",
    "csplit",
    "patch",
    "wget",
    "curl",
    "strace",
    "ltrace",
    "git",
    "npm",
    "pnpm",
    "yarn",
    "history",
    "ssh",
    "cd",
    "pushd",
    // Keys read, or made where they are named (a key is no start-up file).
    "ssh-keygen",
    "ssh-add",
    "ssh-copy-id",
];

/// The first start-up file named in `argv` to a program that may write it.
pub fn given_startup_file(argv: &[String], cwd: Option<&str>) -> Option<Finding> {
    let first = argv.first()?;
    let program = basename(first);
    // A "program" that is itself a start-up file is a piece of some other program's
    // arguments (`diff ~/.bashrc ~/.bashrc.bak`, read in pieces by `embedded`): data.
    let itself = normalize(first, cwd);
    if is_startup_file(&itself) || home_configuration_if_home(&itself) {
        return None;
    }
    if READS_OR_MODELED.contains(&&*program)
        || crate::wrappers::SEARCHERS.contains(&&*program)
        || (program == "tar" && !extracts(argv))
        || (matches!(&*program, "awk" | "gawk" | "mawk" | "nawk") && !awk_may_write(argv))
        || (program == "find" && !find_acts(argv))
    {
        return None;
    }
    let named = argv[1..].iter().find(|word| {
        // An option's value (`--file=~/.gitconfig`), or the word itself; not an option.
        let path = match word.split_once('=') {
            Some((option, value)) if option.starts_with('-') => value,
            _ if word.starts_with('-') => return false,
            _ => word.as_str(),
        };
        let p = normalize(path, cwd);
        is_startup_file(&p) || home_bin(&p) || home_configuration_if_home(&p)
    })?;
    Some(finding(
        Severity::Warn,
        "startup_file_write",
        format!(
            "{program} is given {named}, which shells or tools run or read when they start, \
             and it is not known only to read it: what it writes there runs later, unjudged"
        ),
        argv,
    ))
}

/// Whether an awk line may write what it reads: its program prints into a file or a pipe,
/// calls the system, or comes from a file or a library (`print > FILENAME` rewrites the
/// file it reads; `-i inplace` too).
fn awk_may_write(argv: &[String]) -> bool {
    argv[1..].iter().any(|a| {
        a.contains(['>', '|'])
            || a.contains("system")
            || a.starts_with("-f")
            || a.starts_with("--file")
            || a.starts_with("-i")
            || a.starts_with("--include")
            || a.starts_with("-E")
            || a.starts_with("--exec")
    })
}

/// Whether a `find` line runs commands or writes files: what it hands them is found, not
/// named on the line (`find ~/.bashrc -exec sh -c 'echo x >> {}' \;`).
fn find_acts(argv: &[String]) -> bool {
    argv[1..].iter().any(|a| {
        matches!(
            a.as_str(),
            "-exec"
                | "-execdir"
                | "-ok"
                | "-okdir"
                | "-delete"
                | "-fprint"
                | "-fprint0"
                | "-fprintf"
                | "-fls"
        )
    })
}

/// Whether a `tar` line unpacks (`-x`, `xf`, `--extract`, `--get`) rather than reads.
fn extracts(argv: &[String]) -> bool {
    argv[1..].iter().enumerate().any(|(i, a)| {
        a == "--extract"
            || a == "--get"
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('x'))
            || (i == 0 && !a.starts_with('-') && a.contains('x'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn warned(line: &str) -> bool {
        given_startup_file(&w(line), Some("/work")).is_some()
    }

    #[test]
    fn a_start_up_file_given_to_a_program_that_may_write_it_is_warned() {
        for line in [
            "yq -i .a=1 ~/.bashrc",
            "sd foo bar ~/.profile",
            "dos2unix ~/.bashrc",
            "ed -s ~/.bashrc",
            "crudini --set ~/.gitconfig core pager less",
            "ruby -i -pe 1 ~/.bashrc",
            "tar -xf x.tar -C ~/.config/autostart",
            "awk {print>FILENAME} ~/.bashrc",
            "find ~/.bashrc -exec sh -c x {} ;",
            "tar xf x.tar -C ~/.config/autostart",
            "some-tool --out=~/.zshrc",
            "nano ~/.bashrc",
            "unknown ~/bin/ls",
        ] {
            assert!(warned(line), "{line}");
        }
    }

    #[test]
    fn reading_one_or_a_modeled_write_is_left_to_the_other_rules() {
        for line in [
            "cat ~/.bashrc",
            "grep alias ~/.bashrc",
            "diff ~/.bashrc ~/.bashrc.bak",
            "tar czf backup.tgz ~/.config",
            "awk {print} ~/.bashrc",
            "find ~/.config -name x.json",
            "source ~/.bashrc",
            "cp ~/.bashrc /tmp/b",
            "yq .a config.yml",
            "sd foo bar src/main.rs",
            "vim notes.txt",
            "python3 x.py --verbose",
            "~/.bashrc ~/.bashrc.bak",
        ] {
            assert!(!warned(line), "{line}");
        }
    }
}
