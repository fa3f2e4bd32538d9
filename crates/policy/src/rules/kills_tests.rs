//! Unit tests of `kills.rs`.

use super::*;

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
fn a_pattern_is_read_as_the_program_reads_it() {
    let every = |p: &str, l: &str| selection(p, &words(l)).everyone();
    let init = |p: &str, l: &str| selection(p, &words(l)).init();
    for l in [
        ". ",
        "-f .",
        "-9 -f .*",
        "[a-z]",
        "-v xyzzy",
        "^.",
        "-u me",
        "--euid=me",
        "-Uroot",
    ] {
        assert!(every("pkill", l), "pkill {l}");
    }
    for l in [
        "node",
        "-f server.js",
        "-x .",
        "-u me node",
        "-9 python3",
        "-v .",
    ] {
        assert!(!every("pkill", l), "pkill {l}");
    }
    for l in [
        "-x systemd",
        "systemd",
        "-f /sbin/init",
        "-f sbin",
        "ini",
        "-i SYSTEMD",
        "-u root tini",
        "-KILL -x init",
    ] {
        assert!(init("pkill", l), "pkill {l}");
    }
    for l in [
        "-x system",
        "-u alice systemd",
        "node",
        "-s 1 node",
        "-f initdb",
    ] {
        assert!(!init("pkill", l), "pkill {l}");
    }
    // killall matches whole names unless -r.
    assert!(init("killall", "-9 systemd"));
    assert!(!init("killall", "system"));
    assert!(init("killall", "-r ^sys"));
    assert!(!every("killall", "node"));
    // killall compares a name as it is: `sys.emd` is no spelling of systemd there.
    assert!(!init("killall", "sys.emd"));
    assert!(init("killall", "-r sys.emd"));
    // A pattern this reading cannot compile (glibc's back-references) is unreadable;
    // an everyday one, or killall's literal name, is not.
    let unreadable = |p: &str, l: &str| selection(p, &words(l)).unreadable();
    assert!(unreadable("pkill", r"(.)\1*"));
    assert!(unreadable("pgrep", r"-f ^(.).*\1"));
    assert!(!unreadable("pkill", "-f server.js"));
    assert!(!unreadable("killall", "node("));
    // glibc's anchors of the whole name.
    assert!(every("pkill", r"\`"));
    assert!(every("pkill", r"-f \'"));
    assert!(!every("pkill", r"\`node"));
}
