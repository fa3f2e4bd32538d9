//! The spawner's socket: how a request to start a session travels from the server to the
//! supervisor that takes it.
//!
//! The socket is a `SOCK_SEQPACKET` pair: each request is one message, read whole by one
//! reader, with its descriptors attached (`SCM_RIGHTS`). That is what lets several idle
//! supervisors wait on the socket at once — the kernel hands each message to exactly one
//! of them — where a byte stream needs a single reader to stay whole. A request's JSON
//! travels in the message itself when it is small (nearly always); a larger one (a long
//! command line or environment) travels in a memory file passed as the last
//! descriptor, so no message ever exceeds the socket's buffer.

use std::io::IoSlice;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;

use nix::errno::Errno;
use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};

use super::wire::{MAX_REQUEST_BYTES, SpawnRequest};

/// Largest JSON body sent inside the message; anything longer goes in a memory file. Well
/// under the smallest default socket buffer (about 208 KiB), so a send never fails for size.
pub const INLINE_MAX: usize = 64 * 1024;

/// The whole payload of a message whose JSON is in the memory file passed last.
const BODY_IN_FILE: &[u8] = b"@";

/// Descriptors one request can carry: control socket, up to two stdio descriptors, and the
/// memory file of a large body.
const MAX_FDS: usize = 4;

/// A request and its descriptors: the supervisor's control socket first, then the
/// session's stdio.
pub struct Received {
    pub req: SpawnRequest,
    pub fds: Vec<OwnedFd>,
}

/// What one read of the socket gave.
pub enum Inbox {
    Request(Received),
    /// The server's end closed.
    Closed,
    /// A message that is not a request; its control socket (when it had one) is returned so
    /// the sender hears about it.
    Malformed {
        control: Option<OwnedFd>,
        why: String,
    },
}

/// Send one request with its descriptors (control socket, then stdio). Blocks only while
/// the socket's buffer is full of requests nobody has taken yet.
pub fn send(sock: &OwnedFd, req: &SpawnRequest, fds: &[&OwnedFd]) -> std::io::Result<()> {
    let body = serde_json::to_vec(req).map_err(std::io::Error::other)?;
    let mut raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    let file;
    let payload: &[u8] = if body.len() <= INLINE_MAX {
        &body
    } else {
        file = body_file(&body)?;
        raw.push(file.as_raw_fd());
        BODY_IN_FILE
    };
    let cmsg = [ControlMessage::ScmRights(&raw)];
    loop {
        match sendmsg::<()>(
            sock.as_raw_fd(),
            &[IoSlice::new(payload)],
            &cmsg,
            crate::os::send_flags(),
            None,
        ) {
            Ok(_) => return Ok(()),
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// A file with no name holding `body`.
fn body_file(body: &[u8]) -> std::io::Result<OwnedFd> {
    crate::os::anonymous_file(body)
}

/// Read one message (blocking). `buf` is the reader's own buffer, kept between reads.
pub fn receive(sock: BorrowedFd<'_>, buf: &mut Vec<u8>) -> std::io::Result<Inbox> {
    buf.resize(INLINE_MAX, 0);
    let mut cmsg = nix::cmsg_space!([RawFd; MAX_FDS]);
    let (got, flags, mut fds) = {
        let mut iov = [std::io::IoSliceMut::new(buf)];
        let msg = loop {
            match recvmsg::<()>(
                sock.as_raw_fd(),
                &mut iov,
                Some(&mut cmsg),
                crate::os::receive_flags(),
            ) {
                Ok(m) => break m,
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
        };
        let mut fds = Vec::new();
        for c in msg.cmsgs() {
            if let ControlMessageOwned::ScmRights(raw) = c {
                // SAFETY: the kernel just installed these descriptors in this process for
                // this message; nothing else owns them.
                fds.extend(raw.into_iter().map(|r| unsafe { OwnedFd::from_raw_fd(r) }));
                for fd in &fds {
                    crate::os::received_cloexec(std::os::fd::AsFd::as_fd(fd))?;
                }
            }
        }
        (msg.bytes, msg.flags, fds)
    };
    if got == 0 && fds.is_empty() {
        return Ok(Inbox::Closed);
    }
    let malformed = |fds: Vec<OwnedFd>, why: String| {
        Ok(Inbox::Malformed {
            control: fds.into_iter().next(),
            why,
        })
    };
    if flags.intersects(MsgFlags::MSG_TRUNC | MsgFlags::MSG_CTRUNC) {
        return malformed(fds, "a message longer than a request".into());
    }
    let body = if &buf[..got] == BODY_IN_FILE {
        // The control socket comes first and the memory file last: at least two.
        if fds.len() < 2 {
            return malformed(fds, "a request without its body".into());
        }
        let Some(file) = fds.pop() else {
            return malformed(fds, "a request without its body".into());
        };
        match read_body(file) {
            Ok(b) => b,
            Err(why) => return malformed(fds, why),
        }
    } else {
        buf[..got].to_vec()
    };
    let req: SpawnRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return malformed(fds, format!("a request that does not parse: {e}")),
    };
    if fds.len() != 1 + req.mode.stdio_fds() {
        let why = format!("a request with {} descriptors", fds.len());
        return malformed(fds, why);
    }
    Ok(Inbox::Request(Received { req, fds }))
}

/// The body of a large request, from its memory file (bounded).
fn read_body(file: OwnedFd) -> Result<Vec<u8>, String> {
    let file = std::fs::File::from(file);
    let len = file.metadata().map_err(|e| e.to_string())?.len() as usize;
    if len > MAX_REQUEST_BYTES {
        return Err(format!("a request of {len} bytes"));
    }
    let mut body = vec![0u8; len];
    file.read_exact_at(&mut body, 0)
        .map_err(|e| e.to_string())?;
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::wire::Mode;
    use nix::sys::socket::SockType;
    use std::os::fd::AsFd;

    fn pair() -> (OwnedFd, OwnedFd) {
        crate::os::socket_pair_cloexec(SockType::SeqPacket).unwrap()
    }

    fn request(arg: String) -> SpawnRequest {
        SpawnRequest {
            mode: Mode::Headless,
            program: "/bin/sh".into(),
            args: vec!["-c".into(), arg],
            cwd: "/".into(),
            env: vec![("A".into(), "b".into())],
            landlock: None,
        }
    }

    fn three() -> Vec<OwnedFd> {
        (0..3)
            .map(|_| OwnedFd::from(std::fs::File::open("/dev/null").unwrap()))
            .collect()
    }

    #[test]
    fn small_and_large_requests_arrive_whole_one_per_read() {
        let (a, b) = pair();
        let fds = three();
        let refs: Vec<&OwnedFd> = fds.iter().collect();
        let small = request("echo hi".into());
        let large = request("x".repeat(3 * INLINE_MAX));
        send(&a, &small, &refs).unwrap();
        send(&a, &large, &refs).unwrap();
        let mut buf = Vec::new();
        for want in [small, large] {
            match receive(b.as_fd(), &mut buf).unwrap() {
                Inbox::Request(r) => {
                    assert_eq!(r.req, want);
                    assert_eq!(r.fds.len(), 3);
                }
                _ => panic!("not a request"),
            }
        }
        drop(a);
        assert!(matches!(
            receive(b.as_fd(), &mut buf).unwrap(),
            Inbox::Closed
        ));
    }

    #[test]
    fn garbage_is_refused_with_its_control_socket_and_the_next_request_still_arrives() {
        let (a, b) = pair();
        let fds = three();
        let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
        for payload in [&b"{not json"[..], b"@", &[b'x'; INLINE_MAX + 10][..]] {
            sendmsg::<()>(
                a.as_raw_fd(),
                &[IoSlice::new(payload)],
                &[ControlMessage::ScmRights(&raw[..1])],
                MsgFlags::empty(),
                None,
            )
            .unwrap();
        }
        // A valid request with the wrong number of descriptors.
        send(&a, &request("true".into()), &[&fds[0]]).unwrap();
        let good = request("echo ok".into());
        send(&a, &good, &fds.iter().collect::<Vec<_>>()).unwrap();
        let mut buf = Vec::new();
        for _ in 0..4 {
            match receive(b.as_fd(), &mut buf).unwrap() {
                Inbox::Malformed { control, why } => {
                    assert!(control.is_some(), "{why}");
                }
                _ => panic!("garbage taken for a request"),
            }
        }
        match receive(b.as_fd(), &mut buf).unwrap() {
            Inbox::Request(r) => assert_eq!(r.req, good),
            _ => panic!("the good request was lost"),
        }
    }
}
