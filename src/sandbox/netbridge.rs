//! Inside a sandbox with a network allow-list: the only network is the sandbox's own
//! loopback, and this small helper (the server's binary run as `--pm-net-bridge SOCKET --
//! PROGRAM ARGS…`) listens on it at [`PORT`], passes every connection on to the server's
//! proxy through the Unix socket bound into the sandbox, and runs the program, whose
//! `HTTP(S)_PROXY` point here. It ends as the program ends, with the same status.

#[cfg(unix)]
use std::ffi::OsString;
#[cfg(unix)]
use std::net::{TcpListener, TcpStream};
#[cfg(unix)]
use std::os::unix::net::UnixStream;
#[cfg(unix)]
use std::os::unix::process::CommandExt;
#[cfg(unix)]
use std::path::PathBuf;

#[cfg(unix)]
use nix::sys::signal::{SigHandler, Signal, signal};
#[cfg(unix)]
use nix::sys::wait::{WaitStatus, waitpid};
#[cfg(unix)]
use nix::unistd::{ForkResult, fork};

/// The helper's own argument.
pub const FLAG: &str = "--pm-net-bridge";

/// The port of the proxy inside every sandbox (the sandbox's loopback is its own, so one
/// fixed port serves them all).
pub const PORT: u16 = 3128;

#[cfg(unix)]
/// Exit status when the helper cannot do its job (as a shell says "cannot execute").
const CANNOT_RUN: i32 = 126;

#[cfg(unix)]
/// Run the helper with the arguments after [`FLAG`]; returns the exit status.
pub fn main(args: Vec<OsString>) -> i32 {
    let mut it = args.into_iter();
    let (Some(socket), Some(sep), Some(program)) = (it.next(), it.next(), it.next()) else {
        eprintln!("{FLAG}: usage: {FLAG} SOCKET -- PROGRAM [ARGS…]");
        return CANNOT_RUN;
    };
    if sep != "--" {
        eprintln!("{FLAG}: usage: {FLAG} SOCKET -- PROGRAM [ARGS…]");
        return CANNOT_RUN;
    }
    let rest: Vec<OsString> = it.collect();
    let listener = match TcpListener::bind(("127.0.0.1", PORT)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{FLAG}: cannot listen on 127.0.0.1:{PORT} inside the sandbox: {e}");
            return CANNOT_RUN;
        }
    };
    // SAFETY: this process has one thread here (the helper runs before anything else in
    // the binary's main), so the child may run any code before exec.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            drop(listener);
            let e = std::process::Command::new(&program).args(&rest).exec();
            eprintln!("{}: {e}", program.to_string_lossy());
            // 127 as a shell says "not found", 126 for the rest.
            if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                CANNOT_RUN
            }
        }
        Ok(ForkResult::Parent { child }) => {
            // The program's terminal signals are its own.
            for s in [Signal::SIGINT, Signal::SIGQUIT, Signal::SIGTSTP] {
                // SAFETY: setting a signal to be ignored installs no handler code.
                let _ = unsafe { signal(s, SigHandler::SigIgn) };
            }
            let socket = PathBuf::from(socket);
            let _ = std::thread::Builder::new()
                .name("net-bridge".into())
                .spawn(move || accept(listener, socket));
            wait_for(child)
        }
        Err(e) => {
            eprintln!("{FLAG}: cannot fork: {e}");
            CANNOT_RUN
        }
    }
}

#[cfg(unix)]
fn accept(listener: TcpListener, socket: PathBuf) {
    for conn in listener.incoming().flatten() {
        let socket = socket.clone();
        let _ = std::thread::Builder::new()
            .name("net-bridge-conn".into())
            .spawn(move || pass_on(conn, &socket));
    }
}

#[cfg(unix)]
/// Copy both ways between a program's connection and the proxy.
fn pass_on(conn: TcpStream, socket: &std::path::Path) {
    let Ok(proxy) = UnixStream::connect(socket) else {
        return;
    };
    let (Ok(mut conn_r), Ok(mut proxy_w)) = (conn.try_clone(), proxy.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut conn_r, &mut proxy_w);
        let _ = proxy_w.shutdown(std::net::Shutdown::Write);
    });
    let (mut proxy_r, mut conn_w) = (proxy, conn);
    let _ = std::io::copy(&mut proxy_r, &mut conn_w);
    let _ = conn_w.shutdown(std::net::Shutdown::Write);
    let _ = up.join();
}

#[cfg(unix)]
/// Wait for the program; end as it ended.
fn wait_for(child: nix::unistd::Pid) -> i32 {
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => return code,
            Ok(WaitStatus::Signaled(_, sig, _)) => {
                // SAFETY: restoring the default action installs no handler code.
                let _ = unsafe { signal(sig, SigHandler::SigDfl) };
                let _ = nix::sys::signal::raise(sig);
                return 128 + sig as i32;
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return CANNOT_RUN,
        }
    }
}
