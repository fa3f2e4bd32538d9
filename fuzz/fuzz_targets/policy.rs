//! Any text as a command line, as raw terminal input and as an argv: the policy's shell
//! lexer, wrapper unwrapping and rules must decide without panicking, and every blocked or
//! warned decision must name its rule.
#![no_main]

use std::sync::OnceLock;

use itmcp::policy::{Policy, PolicyInputs};
use libfuzzer_sys::fuzz_target;

static POLICY: OnceLock<Policy> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let policy = POLICY.get_or_init(|| match Policy::load(&PolicyInputs::default()) {
        Ok(loaded) => loaded.policy,
        Err(e) => panic!("default policy: {e}"),
    });
    let d = policy.evaluate(line, Some("/tmp"));
    if let Some(f) = d.deciding() {
        assert!(!f.rule.is_empty());
    }
    let _ = policy.evaluate_input(line, None);
    let _ = policy.evaluate_in_terminal(line, Some("/tmp"));
    let argv: Vec<String> = line.split('\u{0}').map(str::to_string).collect();
    let _ = policy.evaluate_argv(&argv[0], &argv[1..], None);
});
