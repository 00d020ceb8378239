//! `=~`: whole-string regular expression matching, with compiled patterns cached per thread.
//!
//! Patterns are Java's, as Neo4j takes them: besides the classes and quoting rewritten below, that means
//! backreferences (`(a)\1`), look-around (`a(?=b)`), atomic groups and possessive quantifiers, which the `regex`
//! crate refuses. `fancy_regex` handles those by backtracking, and hands every pattern (or part) without them to
//! the `regex` crate, so the plain patterns keep their linear-time matching.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::error::{CypherError, Result};

thread_local! {
    static CACHE: RefCell<HashMap<String, fancy_regex::Regex>> = RefCell::new(HashMap::new());
}

/// Whether `text` matches `pattern` entirely (Cypher's `=~` anchors at both ends, like Java's `matches`).
pub fn full_match(pattern: &str, text: &str) -> Result<bool> {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(pattern) {
            let re = fancy_regex::Regex::new(&format!("^(?:{})$", java_classes(&unquote(pattern)))).map_err(|e| {
                CypherError::argument("InvalidArgumentValue", format!("invalid regular expression '{pattern}': {e}"))
            })?;
            if cache.len() > 256 {
                cache.clear();
            }
            cache.insert(pattern.to_string(), re);
        }
        cache[pattern].is_match(text).map_err(|e| {
            // Only a backtracking pattern fails here: one that would take too long on this text.
            CypherError::argument("InvalidArgumentValue", format!("regular expression '{pattern}' on this text: {e}"))
        })
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

/// `pattern` with the classes that Java (and so Neo4j) reads as ASCII written out as ASCII sets: `\w`, `\d`,
/// `\s` and their negations (the regex crate reads them as Unicode classes, so `é` would be a word character),
/// and, unless the pattern turns on `(?s)`, `.` as any character but Java's line terminators (`\n`, `\r`,
/// U+0085, U+2028, U+2029; the regex crate's `.` excludes only `\n`). Inside a character class the sets nest.
fn java_classes(pattern: &str) -> String {
    // A flag group turning on `s` (`(?s)`, `(?is:...)`, not `(?-s)`).
    let dot_all = pattern.match_indices("(?").any(|(at, _)| {
        let flags = pattern[at + 2..].split(|c: char| !c.is_ascii_alphabetic() && c != '-').next().unwrap_or("");
        flags.split('-').next().is_some_and(|on| on.contains('s'))
    });
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('w') => out.push_str("[0-9A-Za-z_]"),
                Some('W') => out.push_str("[^0-9A-Za-z_]"),
                Some('d') => out.push_str("[0-9]"),
                Some('D') => out.push_str("[^0-9]"),
                Some('s') => out.push_str("[\\t\\n\\x0B\\x0C\\r ]"),
                Some('S') => out.push_str("[^\\t\\n\\x0B\\x0C\\r ]"),
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            },
            '[' => {
                depth += 1;
                out.push(c);
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            '.' if depth == 0 && !dot_all => out.push_str("[^\\n\\r\\x{85}\\x{2028}\\x{2029}]"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::full_match;

    #[test]
    fn classes_and_the_dot_read_as_java_reads_them() {
        let m = |p: &str, t: &str| full_match(p, t).unwrap();
        assert!(!m(r"\w", "é") && m(r"\W", "é") && !m(r"\d", "١") && !m(r"\s", "\u{a0}"));
        assert!(m(r"\w+\s\d", "ab_9 7") && m(r"[\w-]+", "a-b") && !m(r"[\w-]+", "a+b") && m(r"[^\d]", "x"));
        assert!(!m(".", "\r") && !m(".", "\u{2028}") && !m("a.b", "a\u{85}b") && m("a.b", "a\tb") && m(".", "é"));
        assert!(m("(?s)a.b", "a\nb") && m("(?ims)a.b", "a\rb") && !m("(?i-s)a.b", "a\rb"));
        assert!(m(r"\.\\", ".\\") && m(r"\p{L}+", "é"));
    }

    #[test]
    fn backreferences_and_look_around_work_as_in_java() {
        let m = |p: &str, t: &str| full_match(p, t).unwrap();
        assert!(m(r"(a)\1", "aa") && !m(r"(a)\1", "ab"));
        assert!(m(r"(\w+) \1", "hey hey") && !m(r"(\w+) \1", "hey you"));
        assert!(m("a(?=b)b", "ab") && !m("a(?!b).", "ab") && m("a(?!b).", "ac"));
        assert!(m(r"(?<=a)b|ab", "ab") && m(r"(?=.*\d)(?=.*[a-z]).{6,}", "abc123") && !m(r"(?=.*\d).{6,}", "abcdef"));
        assert!(m("(?>a+)b", "aab") && !m("a++a", "aaa"), "atomic groups and possessive quantifiers");
        assert!(full_match("(a", "a").is_err());
    }

    #[test]
    fn java_quoting_is_literal() {
        assert!(full_match(r"(?i)\QA.\E.*", "a.bc").unwrap());
        assert!(!full_match(r"\QA.\E", "AB").unwrap());
        assert!(full_match(r"x\Q*+", "x*+").unwrap());
        assert!(full_match(r"\\Q", r"\Q").unwrap());
    }
}
