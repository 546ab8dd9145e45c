//! The per-run token every `/api/*` request must carry.

use crate::ServeError;

/// 128 random bits, as 32 lowercase hex digits. The inspector answers `/api/*` only to a
/// request that carries it (query `token` or header `X-Framewise-Token`): another local
/// user, or a web page in the same browser that guesses the port, cannot read the capture.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never in a log by accident.
        f.write_str("Token(…)")
    }
}

impl Token {
    /// A fresh token from the operating system's random source.
    pub fn random() -> Result<Self, ServeError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| ServeError::Token(e.to_string()))?;
        Ok(Self(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// A given token (tests).
    pub fn from_string(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The token's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is this token, in time that does not depend on where the two
    /// first differ (only on the candidate's length).
    pub fn matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), candidate.as_bytes());
        let mut diff = u8::from(a.len() != b.len());
        for (i, &y) in b.iter().enumerate() {
            let x = a.get(i).copied().unwrap_or(!y);
            diff |= x ^ y;
        }
        diff == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_tokens_are_128_bits_of_hex_and_differ() {
        let a = Token::random().expect("random source");
        let b = Token::random().expect("random source");
        assert_eq!(a.as_str().len(), 32);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn only_the_exact_token_matches() {
        let t = Token::from_string("00ff");
        assert!(t.matches("00ff"));
        assert!(!t.matches("00fe"));
        assert!(!t.matches("00f"));
        assert!(!t.matches("00ff0"));
        assert!(!t.matches(""));
        assert_eq!(format!("{t:?}"), "Token(…)");
    }
}
