//! Which machine resource an OS error says ran out: such a failure is told to the agent as
//! a limit it may wait out or free, by name, never as an internal error.

/// The resource `e` says ran out (`disk_space`, `open_files`, `processes`, `memory`), if it
/// names one.
pub fn exhausted(e: &std::io::Error) -> Option<&'static str> {
    use nix::errno::Errno;
    Some(match Errno::from_raw(e.raw_os_error()?) {
        Errno::ENOSPC | Errno::EDQUOT => "disk_space",
        Errno::EMFILE | Errno::ENFILE => "open_files",
        Errno::EAGAIN => "processes",
        Errno::ENOMEM => "memory",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_and_a_process_limit_are_named_and_others_are_not() {
        let e = |n| std::io::Error::from_raw_os_error(n);
        assert_eq!(exhausted(&e(nix::libc::ENOSPC)), Some("disk_space"));
        assert_eq!(exhausted(&e(nix::libc::EMFILE)), Some("open_files"));
        assert_eq!(exhausted(&e(nix::libc::EAGAIN)), Some("processes"));
        assert_eq!(exhausted(&e(nix::libc::ENOENT)), None);
        assert_eq!(exhausted(&std::io::Error::other("x")), None);
    }
}
