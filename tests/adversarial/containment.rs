//! Containment, attacked by the session it contains.

use super::*;

/// What a command tries on the supervision chain, the server and the user's other
/// processes: finding and killing or stopping them, tracing an unrelated process, and
/// leaving a `setsid` child behind after stopping its own supervisor. None of it reaches
/// outside the session, `terminate` still ends everything, and the server keeps serving.
#[tokio::test(flavor = "multi_thread")]
async fn containment_holds_against_the_session_it_contains() {
    use std::time::Duration;
    for who in identities() {
        let p = place(who);
        let s = start(who, &p, &[], &[]).await;
        let server = s.pid;
        // The spawner starts with the first command.
        let first = s.call(in_dir("true", &p.ws)).await;
        assert_eq!(first["result"]["exit_code"], 0, "{who:?}: {first:#}");
        let spawner = pids_with_arg("--pm-spawner")
            .into_iter()
            .find(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|st| st.rsplit(')').next().map(str::to_string))
                    .and_then(|rest| rest.split_whitespace().nth(1).map(str::to_string))
                    == Some(server.to_string())
            })
            .expect("the server's spawner");
        // An unrelated process of the same user.
        let mut victim = victim(who, "60");
        let tag = unique_sleep();
        let hostile = format!(
            "kill -STOP {spawner}; kill -STOP $PPID; kill -9 $PPID; \
             pkill -STOP itmcp-spawner; pkill -STOP itmcp-supervis; pkill -9 interactive-ter; \
             kill -9 {server} {spawner}; \
             python3 -c \"import ctypes; print('traced' if ctypes.CDLL(None).ptrace(16, {victim}, 0, 0) == 0 else 'refused')\"; \
             setsid sleep {tag} & sleep {tag} & echo started",
            victim = victim.id()
        );
        let r = s
            .call(json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": hostile}, "runtime": {"wait_ms": 2000}}))
            .await;
        assert_eq!(r["success"], true, "{who:?}: {r:#}");
        let out = printed(&r);
        assert!(
            !out.contains("traced"),
            "{who:?}: traced an unrelated process: {out}"
        );
        assert!(
            wait_present(&tag, 2, Duration::from_secs(5)).await >= 2,
            "{who:?}: {out}"
        );
        // Nothing outside was touched: the server, its spawner and the victim run, unstopped.
        for (what, pid) in [
            ("server", server),
            ("spawner", spawner as u32),
            ("victim", victim.id()),
        ] {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next();
            assert!(
                matches!(state, Some("S" | "R" | "D")),
                "{who:?}: the {what} is {state:?}"
            );
        }
        // The session's own end still ends everything it started, even with its supervisor
        // asked to stop.
        let id = r["identity"]["session_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if !id.is_empty() {
            let t = s
                .call(json!({"action": "terminate", "target": {"session_id": id}}))
                .await;
            assert_eq!(t["success"], true, "{who:?}: {t:#}");
        }
        let left = wait_gone(&tag, Duration::from_secs(10)).await;
        assert!(left.is_empty(), "{who:?}: left running: {left:?}");
        // And the server still serves.
        let ok = s.call(in_dir("echo still-here", &p.ws)).await;
        assert_eq!(ok["result"]["stdout"], "still-here\n", "{who:?}: {ok:#}");
        let _ = victim.kill();
        let _ = victim.wait();
        s.stop().await;
    }
}
