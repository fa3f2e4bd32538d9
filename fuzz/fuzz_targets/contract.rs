//! Any bytes a client could send as tool arguments: parsed as JSON, then through the whole
//! contract pipeline (alias resolution, schema, coupling rules) in every deprecation phase.
//! Every outcome must be an accepted request or a rejection whose payload matches
//! schemas/error.schema.json with the §3.1 strategy of its code. Nothing may panic.
#![no_main]

use itmcp::contract::{self, ErrorCode, Phase, response};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for phase in [Phase::A, Phase::B, Phase::C] {
        match contract::parse(&raw, phase) {
            Ok(req) => {
                let env = contract::Envelope::from_request(&req);
                let empty = contract::Outcome::List(contract::result::Listing {
                    running: false,
                    items: Vec::new(),
                    total: 0,
                    next_cursor: None,
                    sandbox: None,
                });
                let _ = response::success(&env, empty);
            }
            Err(rej) => {
                let payload = response::failure(&rej.envelope, &rej.error);
                let violations = contract::schema::payload_violations(&payload);
                assert!(violations.is_empty(), "{violations:?}\n{payload:#}");
                let code = payload["error"]["code"]
                    .as_str()
                    .and_then(ErrorCode::from_code_str);
                let Some(code) = code else {
                    panic!("no PM_TERM code in {payload:#}");
                };
                assert_eq!(
                    payload["fallback"]["strategy"].as_str(),
                    Some(code.strategy().as_str())
                );
            }
        }
    }
});
