//! The subcommands: terminal ones (`decode`, `inspect`, `sim`, `probe`, `control`, `record`,
//! `export`) and the GUI entry points (`gui`, `screenshot`); `app` defines the command line,
//! `generate` renders it as man pages and shell completions; `flood` (hidden) is the hostile
//! sender of the issue-29 proofs, `relay` (hidden) the lossy two-way link of issue 44.

pub mod app;
pub mod conform;
pub mod control;
pub mod decode;
pub mod export;
pub mod flood;
pub mod generate;
pub mod gui;
pub mod identity;
pub mod inspect;
pub mod probe;
pub mod record;
pub mod relay;
pub mod screenshot;
pub mod serve;
pub mod sim;

/// Reads `--vehicle FILE` (a vehicle file, `assets/vehicles/demo.toml` shows the schema):
/// `None` without one (clearance then knows the arms' own cylinders only, no ground and no
/// obstacles); an error naming the file and what to fix when it cannot be read or used.
pub fn read_vehicle_file(
    path: Option<&std::path::Path>,
) -> anyhow::Result<Option<std::sync::Arc<crate::model::clearance::obstacles::VehicleGeometry>>> {
    use crate::model::clearance::obstacles::VehicleGeometry;
    let Some(path) = path else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        anyhow::anyhow!(
            "--vehicle {}: cannot read it ({e}); give the path of a vehicle file \
             (TOML, as assets/vehicles/demo.toml)",
            path.display()
        )
    })?;
    let vehicle = VehicleGeometry::parse(&text, &path.display().to_string())
        .map_err(|e| anyhow::anyhow!("--vehicle: {e}"))?;
    Ok(Some(std::sync::Arc::new(vehicle)))
}

/// Parses a `--connect` address: `IP`, `IP:PORT`, `[IPv6]:PORT`, `HOST` or `HOST:PORT`, the
/// port defaulting to JUDP's 3794. A host name is resolved once, here (an IPv4 address is
/// preferred: the network side binds IPv4).
pub fn parse_peer_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
    let port = crate::jaus::judp::PORT;
    let forms = format!(
        "give IP, IP:PORT, HOST or HOST:PORT (the port defaults to {port}), \
         e.g. 192.168.1.20, 192.168.1.20:3794, arm1.local or arm1.local:3794"
    );
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("the address is empty: {forms}"));
    }
    if let Ok(addr) = text.parse::<SocketAddr>() {
        if addr.port() == 0 {
            return Err(format!(
                "port 0 in '{text}' is not a port (1 to 65535): {forms}"
            ));
        }
        return Ok(addr);
    }
    if let Ok(ip) = text.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((host, p)) if !host.contains(':') => match p.parse::<u16>() {
            Ok(p) if p != 0 => (host, p),
            _ => {
                return Err(format!(
                    "'{p}' in '{text}' is not a port (1 to 65535): {forms}"
                ));
            }
        },
        _ => (text, port),
    };
    let valid_host = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_');
    if !valid_host {
        return Err(format!("'{text}' is not an address: {forms}"));
    }
    let resolved: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve host '{host}' ({e}): {forms}"))?
        .collect();
    resolved
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| resolved.first())
        .copied()
        .ok_or_else(|| format!("host '{host}' has no address: {forms}"))
}

/// Parses hex with or without separators (spaces, `:`, `,`, a leading `0x`).
pub fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let trimmed = text.trim();
    let trimmed = trimmed
        .strip_prefix("0x")
        .or_else(|| trimmed.strip_prefix("0X"))
        .unwrap_or(trimmed);
    let mut digits = Vec::with_capacity(trimmed.len());
    for (i, c) in trimmed.char_indices() {
        match c {
            c if c.is_ascii_hexdigit() => digits.push(c.to_digit(16).unwrap_or(0) as u8),
            c if c.is_whitespace() || c == ':' || c == ',' => {}
            other => return Err(format!("'{other}' at character {i} is not a hex digit")),
        }
    }
    if digits.len() % 2 != 0 {
        return Err(format!(
            "odd number of hex digits ({}): every byte needs two",
            digits.len()
        ));
    }
    Ok(digits.chunks(2).map(|p| p[0] << 4 | p[1]).collect())
}

#[cfg(test)]
mod tests {
    use super::{parse_hex, parse_peer_addr};
    use std::net::SocketAddr;

    #[test]
    fn connect_accepts_ip_ip_port_host_and_host_port() {
        let at = |s: &str| parse_peer_addr(s).unwrap();
        assert_eq!(at("10.0.0.5"), SocketAddr::from(([10, 0, 0, 5], 3794)));
        assert_eq!(at("10.0.0.5:4000"), SocketAddr::from(([10, 0, 0, 5], 4000)));
        assert_eq!(at("localhost"), SocketAddr::from(([127, 0, 0, 1], 3794)));
        assert_eq!(
            at("localhost:3795"),
            SocketAddr::from(([127, 0, 0, 1], 3795))
        );
        assert_eq!(at("::1").port(), 3794);
        assert_eq!(at("[::1]:4000").port(), 4000);
    }

    #[test]
    fn connect_errors_name_the_accepted_forms() {
        for bad in ["", "10.0.0.5:99999", "host:abc", "a b", "10.0.0.5:0"] {
            let e = parse_peer_addr(bad).unwrap_err();
            assert!(e.contains("IP, IP:PORT, HOST or HOST:PORT"), "{bad}: {e}");
        }
    }

    #[test]
    fn parses_hex_with_and_without_separators() {
        assert_eq!(parse_hex("02 00 11"), Ok(vec![2, 0, 0x11]));
        assert_eq!(parse_hex("0x020011"), Ok(vec![2, 0, 0x11]));
        assert_eq!(parse_hex("02:00:Ab"), Ok(vec![2, 0, 0xab]));
        assert!(parse_hex("02 0").unwrap_err().contains("odd number"));
        assert!(parse_hex("0g").unwrap_err().contains("'g' at character 1"));
    }
}
