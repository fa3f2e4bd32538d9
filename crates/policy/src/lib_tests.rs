//! Unit tests of the policy's entry points (`lib.rs`).

use super::*;

/// Every `cd` used to push one more unknown place for every place known, doubling the
/// list: 20 of them took minutes. A line that moves about is judged, as anywhere.
#[test]
fn a_line_that_moves_about_without_end_is_judged() {
    let p = Policy::default();
    let moves: String = (0..60).map(|i| format!("cd d{i}; ")).collect();
    let d = p.evaluate(&format!("{moves}rm -rf *"), Some("/home/u/project"));
    assert_ne!(d.authorization, Authorization::Allowed, "{d:?}");
    assert_eq!(
        p.evaluate(&format!("{moves}ls"), Some("/home/u/project"))
            .authorization,
        Authorization::Allowed
    );
}

#[test]
fn operator_rules_apply_and_allowed_wins() {
    let inputs = PolicyInputs {
        blocked: Some("terraform destroy; kubectl delete namespace".into()),
        warned: Some("docker system prune".into()),
        allowed: Some("git push --force-with-lease".into()),
        ..PolicyInputs::default()
    };
    let p = Policy::load(&inputs).expect("load").policy;
    assert_eq!(
        p.evaluate("terraform destroy -auto-approve", None)
            .authorization,
        Authorization::Blocked
    );
    assert_eq!(
        p.evaluate("terraform plan", None).authorization,
        Authorization::Allowed
    );
    assert_eq!(
        p.evaluate("docker system prune -af", None).authorization,
        Authorization::AllowedWithWarning
    );
    assert_eq!(
        p.evaluate("git push --force-with-lease origin main", None)
            .authorization,
        Authorization::Allowed
    );
    assert_eq!(
        p.evaluate("git push --force origin main", None)
            .authorization,
        Authorization::AllowedWithWarning
    );
    assert!(
        Policy::load(&PolicyInputs {
            approval: Some("sometimes".into()),
            ..PolicyInputs::default()
        })
        .is_err()
    );
}

#[test]
fn input_lines_are_judged() {
    let p = Policy::default();
    assert_eq!(
        p.evaluate_input("rm -rf /\r", None).authorization,
        Authorization::Blocked
    );
    assert_eq!(
        p.evaluate_input("print('rm -rf /')\r", None).authorization,
        Authorization::Allowed
    );
    assert_eq!(
        p.evaluate_input("\u{3}", None).authorization,
        Authorization::Allowed
    );
    // Keys that erase what came before them: the line entered is what is judged.
    for hidden in [
        "echo x\u{15}rm -rf /\r",
        "rm -rf /x\u{7f}\r",
        "ls\u{3}rm -rf /\r",
    ] {
        assert_eq!(
            p.evaluate_input(hidden, None).authorization,
            Authorization::Blocked,
            "{hidden:?}"
        );
    }
    // Keys that rearrange a line before it is entered: it cannot be judged.
    let d = p.evaluate_input("-rf /\u{1}rm \r", None);
    assert_eq!(d.authorization, Authorization::AllowedWithWarning);
    assert_eq!(d.findings[0].rule, "edited_input");
}
