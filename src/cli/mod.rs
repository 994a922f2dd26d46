//! The subcommands: terminal ones (`decode`, `inspect`, `sim`, `probe`, `control`, `record`,
//! `export`) and the GUI entry points (`gui`, `screenshot`).

pub mod control;
pub mod decode;
pub mod export;
pub mod gui;
pub mod identity;
pub mod inspect;
pub mod probe;
pub mod record;
pub mod screenshot;
pub mod sim;

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
    use super::parse_hex;

    #[test]
    fn parses_hex_with_and_without_separators() {
        assert_eq!(parse_hex("02 00 11"), Ok(vec![2, 0, 0x11]));
        assert_eq!(parse_hex("0x020011"), Ok(vec![2, 0, 0x11]));
        assert_eq!(parse_hex("02:00:Ab"), Ok(vec![2, 0, 0xab]));
        assert!(parse_hex("02 0").unwrap_err().contains("odd number"));
        assert!(parse_hex("0g").unwrap_err().contains("'g' at character 1"));
    }
}
