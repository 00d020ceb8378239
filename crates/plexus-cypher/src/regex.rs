//! `=~`: whole-string regular expression matching, with compiled patterns cached per thread.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::error::{CypherError, Result};

thread_local! {
    static CACHE: RefCell<HashMap<String, regex::Regex>> = RefCell::new(HashMap::new());
}

/// Whether `text` matches `pattern` entirely (Cypher's `=~` anchors at both ends, like Java's `matches`).
pub fn full_match(pattern: &str, text: &str) -> Result<bool> {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(pattern) {
            let re = regex::Regex::new(&format!("^(?:{})$", unquote(pattern))).map_err(|e| {
                CypherError::argument("InvalidArgumentValue", format!("invalid regular expression '{pattern}': {e}"))
            })?;
            if cache.len() > 256 {
                cache.clear();
            }
            cache.insert(pattern.to_string(), re);
        }
        Ok(cache[pattern].is_match(text))
    })
}

/// `pattern` with Java's quoting, `\Q...\E` (to the end when there is no `\E`), written as escaped characters,
/// which is how the regex crate takes a literal.
fn unquote(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains("\\Q") {
        return pattern.into();
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut rest = pattern;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let escaped = &rest[i + 1..];
        let Some(next) = escaped.chars().next() else {
            out.push('\\');
            rest = escaped;
            break;
        };
        if next == 'Q' {
            let quoted = &escaped[1..];
            let (literal, after) = quoted.split_once("\\E").unwrap_or((quoted, ""));
            out.push_str(&regex::escape(literal));
            rest = after;
        } else {
            out.push('\\');
            out.push(next);
            rest = &escaped[next.len_utf8()..];
        }
    }
    out.push_str(rest);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::full_match;

    #[test]
    fn java_quoting_is_literal() {
        assert!(full_match(r"(?i)\QA.\E.*", "a.bc").unwrap());
        assert!(!full_match(r"\QA.\E", "AB").unwrap());
        assert!(full_match(r"x\Q*+", "x*+").unwrap());
        assert!(full_match(r"\\Q", r"\Q").unwrap());
    }
}
