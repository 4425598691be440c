//! Which addresses a link may lead kb to: none on the machine, the local network or any
//! range that is not the public internet, in any of the forms an IPv6 address can carry an
//! IPv4 one.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why kb will not connect to `ip`, or `None` when it is a public address.
pub fn refusal(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refusal_v4(v4),
        IpAddr::V6(v6) => refusal_v6(v6),
    }
}

fn refusal_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a carrier-grade NAT address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if a == 0 {
        Some("an unspecified address")
    } else if ip.is_broadcast()
        || a >= 240
        || (a == 198 && (b == 18 || b == 19))
        || (a == 192 && b == 0 && ip.octets()[2] == 0)
    {
        Some("a reserved address")
    } else if ip.is_documentation() {
        Some("a documentation address")
    } else {
        None
    }
}

fn refusal_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    if let Some(v4) = embedded_v4(ip) {
        return refusal_v4(v4);
    }
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if ip.is_unique_local() {
        Some("a unique-local address")
    } else if ip.is_unicast_link_local() || segments[0] & 0xffc0 == 0xfec0 {
        Some("a link-local address")
    } else if segments[0] == 0x2001 && segments[1] == 0x0db8 {
        Some("a documentation address")
    } else {
        None
    }
}

/// The IPv4 address an IPv6 one stands for: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`). `::` and `::1`
/// are IPv6's own.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(mapped) = ip.to_ipv4_mapped() {
        Some(mapped)
    } else if (s[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified())
        || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]
    {
        Some(low)
    } else if s[0] == 0x2002 {
        Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> bool {
        refusal(text.parse().unwrap()).is_some()
    }

    #[test]
    fn every_range_off_the_public_internet_is_refused() {
        for address in [
            "127.0.0.1",
            "127.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "224.0.0.1",
            "239.255.255.250",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "240.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
            "198.18.0.1",
            "198.19.255.255",
            "192.0.0.8",
            "192.0.2.2",
            "198.51.100.7",
            "203.0.113.9",
            "2001:db8::1",
        ] {
            assert!(refused(address), "{address} should be refused");
        }
    }

    #[test]
    fn public_addresses_are_allowed() {
        for address in [
            "93.184.215.14",
            "1.1.1.1",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.1",
            "172.32.0.1",
            "192.169.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:82b::200e",
            "::ffff:93.184.215.14",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(!refused(address), "{address} should be allowed");
        }
    }
}
