use super::*;

fn argvs(line: &str) -> Vec<Vec<String>> {
    fn walk(c: &Simple, out: &mut Vec<Vec<String>>) {
        out.push(c.argv.clone());
        for s in &c.substitutions {
            walk(s, out);
        }
    }
    let mut out = Vec::new();
    for c in parse(line).commands {
        walk(&c, &mut out);
    }
    out
}

fn v(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}

#[test]
fn operators_split_commands() {
    assert_eq!(
        argvs("a x; b && c || d | e & f"),
        vec![
            v(&["a", "x"]),
            v(&["b"]),
            v(&["c"]),
            v(&["d"]),
            v(&["e"]),
            v(&["f"])
        ]
    );
    assert_eq!(
        argvs("echo 'a; b' \"c && d\""),
        vec![v(&["echo", "a; b", "c && d"])]
    );
    assert_eq!(argvs("echo a\\;b"), vec![v(&["echo", "a;b"])]);
}

#[test]
fn substitutions_and_subshells_are_found() {
    assert_eq!(
        argvs("echo \"$(rm -rf /)\""),
        vec![v(&["echo", COMPUTED]), v(&["rm", "-rf", "/"])]
    );
    assert_eq!(argvs("echo `id`"), vec![v(&["echo", COMPUTED]), v(&["id"])]);
    assert_eq!(
        argvs("(cd / && rm -rf x)"),
        vec![v(&["cd", "/"]), v(&["rm", "-rf", "x"])]
    );
    assert_eq!(
        argvs("diff <(ls a) <(ls b)"),
        vec![
            v(&["diff", COMPUTED, COMPUTED]),
            v(&["ls", "a"]),
            v(&["ls", "b"])
        ]
    );
    assert_eq!(
        argvs("echo '$(rm -rf /)'"),
        vec![v(&["echo", "$(rm -rf /)"])]
    );
    assert_eq!(argvs("echo $((1+2))"), vec![v(&["echo", COMPUTED])]);
}

#[test]
fn redirections_and_assignments() {
    let p = parse("FOO=1 BAR=2 dd if=x 2>/dev/null > /dev/sda");
    assert_eq!(p.commands[0].argv, v(&["dd", "if=x"]));
    assert_eq!(p.commands[0].redirects, v(&["/dev/null", "/dev/sda"]));
    let p = parse("echo x>out.txt 2>&1");
    assert_eq!(p.commands[0].argv, v(&["echo", "x"]));
    assert_eq!(p.commands[0].redirects, v(&["out.txt"]));
    // An input redirection is a file read, not written.
    let p = parse("nc host 80 < ~/.netrc > out");
    assert_eq!(p.commands[0].reads, v(&["~/.netrc"]));
    assert_eq!(p.commands[0].redirects, v(&["out"]));
}

#[test]
fn a_function_whose_body_is_a_subshell_shows_its_commands() {
    assert!(argvs("x() (rm -rf ~); x").contains(&v(&["rm", "-rf", "~"])));
    assert!(argvs("x () ( rm -rf / )").contains(&v(&["rm", "-rf", "/"])));
}

#[test]
fn comments_and_heredocs_are_not_commands() {
    assert_eq!(argvs("ls # rm -rf /"), vec![v(&["ls"])]);
    assert_eq!(
        argvs("cat <<EOF\nrm -rf /\nEOF\necho done"),
        vec![v(&["cat"]), v(&["echo", "done"])]
    );
    assert_eq!(
        argvs("cat <<-'X'\n\trm -rf /\n\tX\nls"),
        vec![v(&["cat"]), v(&["ls"])]
    );
}

#[test]
fn broken_lines_are_errors() {
    assert!(!parse("echo 'unterminated").errors.is_empty());
    assert!(!parse("echo $(ls").errors.is_empty());
    assert!(parse("ls -la").errors.is_empty());
    assert!(!parse("ls -la").compound);
    assert!(parse("ls | wc").compound);
    assert!(parse("ls > x").compound);
}

#[test]
fn pipelines_are_numbered() {
    let p = parse("curl x | sh; echo y");
    assert_eq!(p.commands[0].pipeline, p.commands[1].pipeline);
    assert_ne!(p.commands[1].pipeline, p.commands[2].pipeline);
}

#[test]
fn compound_commands_run_their_bodies() {
    assert_eq!(
        argvs("if true; then rm -rf /; else ls; fi"),
        vec![v(&["true"]), v(&["rm", "-rf", "/"]), v(&["ls"])]
    );
    // The loop's header assigns its variable every word at once (judged so in the body).
    assert_eq!(
        argvs("for i in a b; do rm -r \"$i\"; done"),
        vec![v(&[]), v(&["rm", "-r", "$i"])]
    );
    assert_eq!(
        parse("for i in a b; do :; done").commands[0].assignments,
        vec![("i".to_string(), "a b".to_string())]
    );
    assert_eq!(
        argvs("while ! false; do sleep 1; done"),
        vec![v(&["false"]), v(&["sleep", "1"])]
    );
    assert_eq!(
        argvs("case $x in a) rm -rf /;; *) ls;; esac"),
        vec![v(&["rm", "-rf", "/"]), v(&["ls"])]
    );
    assert_eq!(
        argvs("f() { mkfs /dev/sda; }"),
        vec![v(&["mkfs", "/dev/sda"])]
    );
    assert_eq!(argvs("function g { halt; }"), vec![v(&["halt"])]);
    assert_eq!(argvs("g(){ halt; }"), vec![v(&["halt"])]);
}

#[test]
fn heredocs_and_here_strings_are_the_command_input() {
    let p = parse("bash <<EOF\nrm -rf /\nEOF\nls");
    assert_eq!(p.commands[0].argv, v(&["bash"]));
    assert_eq!(p.commands[0].input, "rm -rf /\n");
    assert_eq!(p.commands[1].argv, v(&["ls"]));
    let p = parse("sh <<< 'rm -rf /'");
    assert!(p.errors.is_empty(), "{:?}", p.errors);
    assert_eq!(p.commands[0].argv, v(&["sh"]));
    assert_eq!(p.commands[0].input, "rm -rf /\n");
}

#[test]
fn assignments_are_kept() {
    let p = parse("X='rm -rf /'; $X");
    assert!(p.commands[0].argv.is_empty());
    assert_eq!(
        p.commands[0].assignments,
        vec![("X".to_string(), "rm -rf /".to_string())]
    );
    assert_eq!(p.commands[1].argv, v(&["$X"]));
}

#[test]
fn fish_and_zsh_substitutions_are_commands_where_a_word_begins() {
    // fish's `(cmd)` and zsh's `=(cmd)`: the command inside is one of the line's.
    assert!(argvs("ls (rm -rf ~)").contains(&v(&["rm", "-rf", "~"])));
    assert!(argvs("diff =(ls) =(ls -a)").contains(&v(&["ls", "-a"])));
    // Not a function header, an array, a glob qualifier, a case pattern, a call glued to
    // a name, nor a quoted string alone in parentheses.
    for literal in [
        "f () { ls; }",
        "arr=(a b)",
        "a[1]=x",
        "ls *(.)",
        "ls !(*.txt)",
        "case x in (a) echo a;; esac",
        "print(1+1)",
        "echo ('rm -rf /')",
    ] {
        assert!(
            parse(literal)
                .commands
                .iter()
                .all(|c| c.substitutions.is_empty()),
            "{literal}: {:?}",
            argvs(literal)
        );
    }
}
