//! Windows' containment, run as it is used: real processes in a real Job Object (under Wine
//! on Linux: scripts/windows-tests). The processes are this test binary again, run as
//! [`helper`] in one of two roles: a sleeper, or a parent that starts a sleeper and says its
//! pid.
#![cfg(windows)]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use itmcp_os::job::Job;

/// The role a copy of this binary plays, when set.
const ROLE: &str = "ITMCP_JOB_TEST_ROLE";

/// Not a test: the body of the processes the tests start.
#[test]
fn helper() {
    match std::env::var(ROLE).as_deref() {
        Ok("sleeper") => std::thread::sleep(Duration::from_secs(120)),
        Ok("parent") => {
            let mut child = copy("sleeper").spawn().unwrap();
            println!("grandchild={}", child.id());
            let _ = child.wait();
        }
        Ok("breakaway") => {
            // Asks Windows to start a child outside the job it is in.
            use std::os::windows::process::CommandExt;
            const CREATE_BREAKAWAY_FROM_JOB: u32 = 0x0100_0000;
            match copy("sleeper")
                .creation_flags(CREATE_BREAKAWAY_FROM_JOB)
                .spawn()
            {
                Ok(mut child) => {
                    println!("breakaway={}", child.id());
                    let _ = child.kill();
                    let _ = child.wait();
                }
                Err(e) => println!("breakaway=refused: {e}"),
            }
        }
        _ => {}
    }
}

/// This binary run as `helper` in `role`.
fn copy(role: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "helper", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Wait until `done` holds, or fail after a deadline generous enough for a loaded machine
/// (the check is that it happens, not how fast).
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "{what} never happened");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_terminated_job_ends_its_program_and_what_the_program_started() {
    let job = Job::new().unwrap();
    let mut cmd = copy("parent");
    cmd.stdout(Stdio::piped());
    let mut child = job.spawn(&mut cmd).unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let grandchild: u32 = out
        .lines()
        .map_while(Result::ok)
        // After the harness's own `test helper ... ` on the same line.
        .find_map(|l| {
            l.split("grandchild=")
                .nth(1)
                .map(|p| p.trim().parse().unwrap())
        })
        .expect("the parent said its child's pid");
    // Both are in the job: the grandchild was put there by Windows, not by this test.
    let pids = job.pids().unwrap();
    assert!(pids.contains(&child.id()), "{pids:?}");
    assert!(pids.contains(&grandchild), "{pids:?} lacks {grandchild}");
    job.terminate(7).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(7));
    eventually("the grandchild's end", || job.pids().unwrap().is_empty());
}

#[test]
fn closing_the_job_ends_its_processes() {
    let job = Job::new().unwrap();
    let mut child = job.spawn(&mut copy("sleeper")).unwrap();
    assert_eq!(job.pids().unwrap(), vec![child.id()]);
    // The server's death closes its handles: the same as dropping the job here.
    drop(job);
    eventually("the sleeper's end", || child.try_wait().unwrap().is_some());
}

#[test]
fn a_process_started_by_someone_else_can_be_put_in_a_job() {
    let mut child = copy("sleeper").spawn().unwrap();
    let job = Job::new().unwrap();
    use std::os::windows::io::AsRawHandle;
    job.assign(child.as_raw_handle()).unwrap();
    assert_eq!(job.pids().unwrap(), vec![child.id()]);
    job.terminate(3).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(3));
}

#[test]
fn nothing_in_the_job_can_start_a_process_outside_it() {
    let job = Job::new().unwrap();
    let mut cmd = copy("breakaway");
    cmd.stdout(Stdio::piped());
    let mut child = job.spawn(&mut cmd).unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let said = out
        .lines()
        .map_while(Result::ok)
        .find_map(|l| l.split("breakaway=").nth(1).map(str::to_string))
        .expect("the program said how its breakaway went");
    assert!(said.starts_with("refused"), "a child left the job: {said}");
    child.wait().unwrap();
}
