//! The allow-list of system-call numbers as a search tree in BPF.
//!
//! seccompiler compiles a filter as one comparison after another: the allow-list's ~350
//! calls made a 1 500-instruction program, and the kernel, which runs a new filter once for
//! every call number when it is installed (to cache the calls always allowed), took 1.9 ms
//! to install it — on every sandboxed command, more than the whole Landlock sandbox cost
//! before. This filter compares the number against the list's runs of consecutive numbers
//! by halves: about 200 instructions, a dozen run per call. It only allows or refuses by
//! number; the calls allowed under conditions on their arguments (`ioctl`, `clone`, …) are
//! allowed here and refused, when their arguments say so, by a second filter seccompiler
//! builds ([`super::syscalls::refusals`]). seccompiler has no comparison but equality on the
//! number, which is why these few instructions are written here.

#![cfg(target_os = "linux")]

use seccompiler::{BpfProgram, sock_filter};

const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGT_K: u16 = 0x25; // BPF_JMP | BPF_JGT | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K

/// `seccomp_data`: the call's number, then the architecture.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;

const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The runs of consecutive numbers in `numbers` (sorted, no repeats), as `(first, last)`.
fn runs(numbers: &[u32]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &n in numbers {
        match out.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(n) => *last = n,
            _ => out.push((n, n)),
        }
    }
    out
}

/// A filter that allows the calls numbered `allowed` and refuses every other with `errno`;
/// a call made for another architecture than `arch` (`AUDIT_ARCH_*`) kills the process, as
/// seccompiler's own filters do. x32 calls carry a high bit in their number, so no run
/// holds them.
pub fn allow_numbers(allowed: &[i64], arch: u32, errno: u32) -> Result<BpfProgram, String> {
    let mut numbers: Vec<u32> = allowed
        .iter()
        .map(|&n| u32::try_from(n).map_err(|_| format!("system call number {n} out of range")))
        .collect::<Result<_, _>>()?;
    numbers.sort_unstable();
    numbers.dedup();
    let mut program = vec![
        stmt(LD_W_ABS, ARCH_OFFSET),
        jump(JEQ_K, arch, 1, 0),
        stmt(RET_K, RET_KILL_PROCESS),
        stmt(LD_W_ABS, NR_OFFSET),
    ];
    program.extend(tree(&runs(&numbers), RET_ERRNO | (errno & 0xffff))?);
    Ok(program)
}

/// The search over `runs`: the middle run's bounds, then the runs below it, then those
/// above (jumps go only forward, and at most 255 instructions).
fn tree(runs: &[(u32, u32)], refuse: u32) -> Result<Vec<sock_filter>, String> {
    if runs.is_empty() {
        return Ok(vec![stmt(RET_K, refuse)]);
    }
    let mid = runs.len() / 2;
    let (lo, hi) = runs[mid];
    let below = tree(&runs[..mid], refuse)?;
    let above = tree(&runs[mid + 1..], refuse)?;
    let over = u8::try_from(below.len() + 1)
        .map_err(|_| "the allow-list's search tree is too deep for BPF's jumps".to_string())?;
    let mut out = vec![
        // nr < lo: the runs below (past the next two instructions).
        jump(JGE_K, lo, 0, 2),
        // nr > hi: the runs above (past the allowing return and the runs below).
        jump(JGT_K, hi, over, 0),
        stmt(RET_K, RET_ALLOW),
    ];
    out.extend(below);
    out.extend(above);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the filter returns for a call `nr` of architecture `arch` (the instructions
    /// this module writes, run as the kernel runs them).
    fn run(program: &[sock_filter], nr: u32, arch: u32) -> u32 {
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &program[pc];
            match i.code {
                LD_W_ABS => acc = if i.k == NR_OFFSET { nr } else { arch },
                RET_K => return i.k,
                JEQ_K | JGT_K | JGE_K => {
                    let taken = match i.code {
                        JEQ_K => acc == i.k,
                        JGT_K => acc > i.k,
                        _ => acc >= i.k,
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                other => panic!("instruction {other:#x} not written by this module"),
            }
            pc += 1;
        }
    }

    #[test]
    fn every_number_is_allowed_exactly_when_listed() {
        let arch = 0xc000_003e;
        let cases: &[&[i64]] = &[
            &[],
            &[0],
            &[5],
            &[0, 1, 2, 3, 10, 11, 20, 200, 201, 202, 439],
            &(0..300).filter(|n| n % 3 != 0).collect::<Vec<_>>(),
        ];
        for allowed in cases {
            let p = allow_numbers(allowed, arch, 1).expect("builds");
            for nr in (0..1024).chain([0x4000_0000, 0x4000_0001, u32::MAX]) {
                let want = if allowed.contains(&i64::from(nr)) {
                    RET_ALLOW
                } else {
                    RET_ERRNO | 1
                };
                assert_eq!(run(&p, nr, arch), want, "{nr} in {allowed:?}");
            }
            assert_eq!(run(&p, 0, 0x4000_0003), RET_KILL_PROCESS);
        }
    }

    #[test]
    fn the_sandboxs_list_makes_a_short_filter() {
        for metadata in [false, true] {
            let map = crate::sandbox::syscalls::allowed(metadata).expect("compiles");
            let numbers: Vec<i64> = map.keys().copied().collect();
            let p = allow_numbers(&numbers, 0xc000_003e, 1).expect("builds");
            assert!(p.len() < 400, "{} instructions", p.len());
            for nr in 0..1024u32 {
                let listed = map.contains_key(&i64::from(nr));
                assert_eq!(run(&p, nr, 0xc000_003e) == RET_ALLOW, listed, "{nr}");
            }
        }
    }
}
