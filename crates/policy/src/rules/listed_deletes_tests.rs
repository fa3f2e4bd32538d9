//! Unit tests of `listed_deletes.rs`.

use super::*;
use crate::lex;

fn check_listed_deletes(line: &str, cwd: Option<&str>) -> Option<Finding> {
    listed_deletes_in(&lex::parse_shared(line).commands, cwd)
}

#[test]
fn what_a_listing_hands_to_a_deleter_is_judged_as_deleted() {
    for line in [
        "find / -type f | xargs rm",
        "find ~ | xargs rm -f",
        "find ~ -type f -print0 | xargs -0 shred -u",
        "find /etc -type f | xargs rm",
        "sudo find / -name '*' | sudo xargs rm -f",
        "ls ~ | xargs rm -rf",
        "locate -r . | xargs rm",
        "rm -f $(find ~ -type f)",
        "find ~ | parallel rm",
        "for f in $(find ~); do rm -f $f; done",
        "find ~ -type f | while read f; do rm \"$f\"; done",
        "find / | while read -r f; do shred -u \"$f\"; done",
        "find ~ -type f -exec truncate -s0 {} +",
        "find ~ -type f | xargs truncate -s 0",
        "find ~ -type f | xargs mv -t /tmp",
        "find ~ | xargs -n1 env rm -f",
        "find ~ -exec env rm {} +",
        "find / -exec nice -n 5 shred -u {} ;",
    ] {
        let f = check_listed_deletes(line, Some("/work/project"));
        assert!(
            f.as_ref().is_some_and(|f| f.severity == Severity::Block),
            "{line}: {f:?}"
        );
    }
    // Any other program than a reading one, handed every file there: asked about.
    for line in [
        "find ~ -type f | xargs sed -i d",
        "find / -type f -exec sed -i d {} +",
        "find ~ | xargs chmod 000",
        "find ~ -type f | xargs -I{} cp /dev/null {}",
        "find ~ -type f -exec sh -c ': > \"$1\"' _ {} ;",
        "find ~ -type f -exec dd if=/dev/zero of={} ;",
        "for f in $(find ~ -type f); do sed -i d \"$f\"; done",
        "sed -i d ~/*",
    ] {
        let f = check_listed_deletes(line, Some("/work/project"));
        assert!(
            f.as_ref().is_some_and(|f| f.severity == Severity::Warn),
            "{line}: {f:?}"
        );
    }
    // Paths the line does not show, handed to a deleter: asked about.
    for line in [
        "du -a / | cut -f2 | xargs rm -f",
        "git ls-files | xargs rm",
        "cat list | xargs shred -u",
        "rm -f $(cat list)",
        "rm -f $(du -a ~ | cut -f2)",
        "X=$(du -a ~ | cut -f2); rm -f $X",
        "for f in $(cat list); do rm -f $f; done",
        "du -a / | while read s f; do rm -f \"$f\"; done",
        "while read f; do rm \"$f\"; done < list",
        "xargs rm < list",
        "xargs -a list rm",
        "find . | grep -o '/.*' | xargs rm",
        "echo $FILES | xargs rm",
    ] {
        let f = check_listed_deletes(line, Some("/work/project"));
        assert!(
            f.as_ref()
                .is_some_and(|f| f.severity == Severity::Warn && f.rule == "deletes_unread_paths"),
            "{line}: {f:?}"
        );
    }
    // A listing read back past what only selects its lines.
    let f = check_listed_deletes("find ~ | grep -v x | sort | xargs rm", None);
    assert!(f.is_some_and(|f| f.severity == Severity::Block));
    // Judged in every place the line moves to; every file named by a glob, however
    // written, variables and braces expanded.
    for line in [
        "cd / && find | xargs rm",
        "cd / && find -delete",
        "rm ~/*",
        "truncate -s0 ~/*",
        "sudo rm -f /etc/*",
        "rm -f ~/?*",
        "rm -f ~/[a-z]*",
        "rm -f ~/*/*",
        "rm -f {~,/root}/*",
        "X=~/*; rm -f $X",
        "cd ~ && rm -f *",
        "shred -u /usr/bin/*",
    ] {
        let d = crate::Policy::default().evaluate(line, Some("/work/p"));
        assert_eq!(
            d.authorization,
            crate::Authorization::Blocked,
            "{line}: {d:?}"
        );
    }
    for line in ["rm -f ~/*.log", "rm -f *", "rm -f build/*", "find -delete"] {
        let d = crate::Policy::default().evaluate(line, Some("/work/p"));
        assert_ne!(
            d.authorization,
            crate::Authorization::Blocked,
            "{line}: {d:?}"
        );
    }
    for line in [
        "find . -name '*.o' | xargs rm",
        "find /tmp/build -type f | xargs rm -f",
        "find ~ -name '*.log' | xargs ls -l",
        "find ~ -type f | wc -l",
        "rm -f $(find . -name '*.pyc')",
        "find . -name '*.o' | grep -v keep | head -50 | xargs rm",
        "rm -f \"$(pwd)/a.o\" $(mktemp -u)",
        "echo a.o b.o | xargs rm",
        "xargs rm <<< 'a.o b.o'",
        "parallel rm ::: a.o b.o",
        "for f in $(cat list); do wc -l $f; done",
        "find ~ -name '*.md' | xargs grep -l todo",
        "cp ~/* /backup/",
        "sed -n p ~/*",
        "rm ./build/*",
        "find ~ -type f -exec ls -l {} +",
        "find / -name core -exec file {} ;",
        "for f in $(find ~ -name '*.md'); do wc -l $f; done",
        "find . | while read f; do rm \"$f\"; done",
    ] {
        assert_eq!(
            check_listed_deletes(line, Some("/work/project")),
            None,
            "{line}"
        );
    }
}
