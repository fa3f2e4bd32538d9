//! A cloud instance's metadata service: from inside a machine in the cloud it hands out the
//! machine's credentials (`/latest/meta-data/iam/security-credentials/`, a service
//! account's token) to whatever asks, so a request there is a credentials read. Its
//! address is matched in the forms a URL can write it: the dotted address, one number in
//! decimal, hex or octal (`2852039166`, `0xa9fea9fe`), IPv6 (`fd00:ec2::254`, an IPv4-mapped
//! `[::ffff:169.254.169.254]`), and the providers' names.

/// The metadata services' addresses (AWS, GCP, Azure, OpenStack, Oracle: 169.254.169.254;
/// AWS ECS task credentials: 169.254.170.2; Alibaba: 100.100.100.200).
const ADDRESSES: &[[u8; 4]] = &[
    [169, 254, 169, 254],
    [169, 254, 170, 2],
    [100, 100, 100, 200],
];

/// Their names.
const NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "fd00:ec2::254",
    "fd00:ec2::23",
];

/// The finding for a command that names a metadata service among its arguments.
pub fn asked(argv: &[String]) -> Option<super::Finding> {
    argv.get(1..)?
        .iter()
        .any(|a| names_metadata_service(a))
        .then(|| {
            super::finding(
                super::Severity::Warn,
                "secret_read",
                "asks a cloud instance's metadata service, which hands out the machine's \
                 credentials",
                argv,
            )
        })
}

/// Whether a word of a command names a metadata service's host: in a URL, or alone as an
/// address or a dotted name (a one-label name alone, `metadata`, is a file's as often).
pub fn names_metadata_service(word: &str) -> bool {
    let url = word.contains("://");
    hosts_in(word).any(|h| is_metadata_host(&h) && (url || h.contains(['.', ':'])))
}

/// The hosts a word may name: after `scheme://`, or the word itself, up to the port or path.
fn hosts_in(word: &str) -> impl Iterator<Item = String> + '_ {
    word.split("://")
        .enumerate()
        .filter(move |(i, _)| *i > 0 || !word.contains("://"))
        .map(|(_, rest)| {
            let rest = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
            let host = if let Some(v6) = rest.strip_prefix('[') {
                v6.split(']').next().unwrap_or_default()
            } else {
                rest.split([':', '/', '?', '#']).next().unwrap_or_default()
            };
            host.trim_end_matches('.').to_ascii_lowercase()
        })
}

fn is_metadata_host(host: &str) -> bool {
    if NAMES.contains(&host) {
        return true;
    }
    let v4 = host.strip_prefix("::ffff:").unwrap_or(host);
    ipv4(v4).is_some_and(|a| ADDRESSES.contains(&a))
}

/// An IPv4 address as `inet_aton` reads it: one to four parts, each decimal, hex (`0x`) or
/// octal (leading `0`), the last filling the bytes left.
fn ipv4(host: &str) -> Option<[u8; 4]> {
    let parts: Vec<u64> = host
        .split('.')
        .map(|p| {
            if let Some(hex) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
                u64::from_str_radix(hex, 16).ok()
            } else if p.len() > 1 && p.starts_with('0') {
                u64::from_str_radix(&p[1..], 8).ok()
            } else {
                p.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    let (last, head) = parts.split_last()?;
    if parts.len() > 4 || head.iter().any(|p| *p > 255) {
        return None;
    }
    let room = 8 * (4 - head.len() as u32);
    if room < 64 && *last >= 1u64 << room {
        return None;
    }
    let mut n: u64 = *last;
    for (i, p) in head.iter().enumerate() {
        n |= p << (24 - 8 * i as u32);
    }
    Some((n as u32).to_be_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_service_in_every_form_a_url_writes_it() {
        for w in [
            "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
            "169.254.169.254",
            "http://2852039166/latest",
            "http://0xa9fea9fe/latest",
            "http://0251.0376.0251.0376/",
            "http://169.254.43518/",
            "http://[::ffff:169.254.169.254]/",
            "http://[fd00:ec2::254]/latest/meta-data/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://user@169.254.170.2/v2/credentials",
            "url=http://100.100.100.200/latest/meta-data/",
            "http://metadata/computeMetadata/v1/",
        ] {
            assert!(names_metadata_service(w), "{w}");
        }
        for w in [
            "http://169.254.169.25/",
            "https://example.com/169.254.169.254",
            "10.0.0.1",
            "metadata.json",
            "metadata",
            "-H",
            "http://localhost:8080/metadata",
        ] {
            assert!(!names_metadata_service(w), "{w}");
        }
    }
}
