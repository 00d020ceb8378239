//! `=~`: whole-string regular expression matching, with compiled patterns cached per thread.
//!
//! Patterns are Java's, as Neo4j takes them: besides the classes and quoting rewritten below, that means
//! backreferences (`(a)\1`), look-around (`a(?=b)`), atomic groups and possessive quantifiers, which the `regex`
//! crate refuses. `fancy_regex` handles those by backtracking, and hands every pattern (or part) without them to
//! the `regex` crate, so the plain patterns keep their linear-time matching.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::error::{CypherError, Result};

mod java;

thread_local! {
    static CACHE: RefCell<HashMap<String, fancy_regex::Regex>> = RefCell::new(HashMap::new());
}

/// Whether `text` matches `pattern` entirely (Cypher's `=~` anchors at both ends, like Java's `matches`).
pub fn full_match(pattern: &str, text: &str) -> Result<bool> {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        // One lookup for a pattern seen before, which is every row's after the first.
        let re = match cache.get(pattern) {
            Some(re) => re,
            None => {
                let re = fancy_regex::Regex::new(&java::full_match_pattern(pattern)).map_err(|e| {
                    // A position would count in the rewritten pattern, not in the one the query wrote.
                    let e = e.to_string();
                    let reason = match e.strip_prefix("Parsing error at position ") {
                        Some(rest) => rest.split_once(": ").map_or(rest, |(_, reason)| reason),
                        None => &e,
                    };
                    CypherError::argument(
                        "InvalidArgumentValue",
                        format!("invalid regular expression '{pattern}': {reason}"),
                    )
                })?;
                if cache.len() > 256 {
                    cache.clear();
                }
                cache.entry(pattern.to_string()).or_insert(re)
            }
        };
        re.is_match(text).map_err(|e| {
            // Only a backtracking pattern fails here: one that would take too long on this text.
            CypherError::argument("InvalidArgumentValue", format!("regular expression '{pattern}' on this text: {e}"))
        })
    })
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

    /// Answers checked against Neo4j 5.26.
    #[test]
    fn java_escapes_posix_classes_and_flags() {
        let m = |p: &str, t: &str| full_match(p, t).unwrap_or_else(|e| panic!("{p}: {e}"));
        // \h and \v are white space, not hex digits and vertical tab alone.
        assert!(m(r"a\hb", "a b") && m(r"\h", "\u{3000}") && !m(r"\h", "f") && m(r"\H", "a") && m(r"[\H]", "5"));
        assert!(m(r"\v", "\n") && m(r"\v", "\u{2028}") && !m(r"\v", " ") && m(r"\V", "a"));
        // A backslash before a sign is the sign: \< and \> are no word boundaries.
        assert!(m(r"\<b\>", "<b>") && !m(r"\<a\>", "a") && m(r"\<\w+\>", "<a>") && m(r"\#\ ", "# "));
        // POSIX classes are ASCII.
        assert!(!m(r"\p{Alpha}", "é") && m(r"\P{Alpha}", "é") && m(r"\p{Punct}", "$") && m(r"\p{Punct}+", "+`~"));
        assert!(!m(r"\p{Digit}", "٣") && m(r"[^\p{Alpha}]", "é") && m(r"\p{XDigit}\p{Alnum}\p{Blank}", "fZ\t"));
        assert!(m(r"\p{L}", "é") && m(r"\p{IsLatin}", "é"), "Unicode properties stay Unicode");
        // Octal and control escapes, \e, \R and \Z.
        assert!(m(r"\0101", "A") && m(r"\011", "\t") && !m(r"(a)\01", "aa") && m(r"\00", "\0") && m(r"\cI", "\t"));
        assert!(
            m(r"\e", "\u{1b}")
                && m(r"a\Rb", "a\r\nb")
                && m(r"a\Rb", "a\u{85}b")
                && !m(r"\R{2}", "\r\n")
                && m(r"\R{2}", "\n\r")
                && m(r"a\Z", "a")
        );
        // (?x) comments, and the flags only Java has.
        assert!(m("(?x) a  b # comment", "ab") && m("(?x)a # one\n b # two", "ab") && m("a(?x)b#c", "ab"));
        assert!(m(r"(?U)\w", "é") && m(r"(?U)\d", "٣") && m("(?U)a+", "aaa") && m("(?d).", "\r") && m("(?c)a", "a"));
        assert!(!m("(?d).", "\n") && m("(?i-d)A", "a"));
    }

    /// The reason a pattern is refused, without a position counted in the rewritten pattern.
    #[test]
    fn a_refused_pattern_gives_the_reason_only() {
        let e = full_match("(", "a").unwrap_err();
        assert!(e.message.starts_with("invalid regular expression '(': "), "{e}");
        assert!(!e.message.contains("position"), "{e}");
    }
}
