//! String functions: `left`, `right`, `substring`, case (`toUpper`/`upper`, `toLower`/`lower`), trimming (`trim`,
//! `ltrim`, `rtrim`, `btrim`), `replace`, `split` and `char_length`. (`size` and `reverse`, which also take lists,
//! are in [`super::list`].)
//!
//! Positions and lengths count characters (Unicode code points), not bytes. A `null` string, position or length
//! gives `null` (as Neo4j 5 answers); a non-integer or negative position or length is an error.

use super::{arg, invalid_type, out_of_range};
use crate::error::{CypherError, Result};
use crate::value::Value;

/// The argument as a string; `None` for `null`.
fn text<'a>(function: &str, v: &'a Value) -> Result<Option<&'a str>> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        other => Err(invalid_type(function, "a string", other)),
    }
}

/// A length or position argument: a non-negative integer; `None` for `null`.
fn count(function: &str, what: &str, v: &Value) -> Result<Option<usize>> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) if *i >= 0 => Ok(Some(usize::try_from(*i).unwrap_or(usize::MAX))),
        Value::Int(i) => Err(out_of_range(function, format!("{what} must not be negative, got {i}"))),
        other => Err(invalid_type(function, &format!("an integer {what}"), other)),
    }
}

/// The byte offset of character `n` in `s` (the length of `s` when it has fewer characters).
fn byte_offset(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// `left(s, n)`: the first `n` characters.
pub fn left(args: &[Value]) -> Result<Value> {
    let Some(s) = text("left", arg(args, 0))? else { return Ok(Value::Null) };
    let Some(n) = count("left", "length", arg(args, 1))? else { return Ok(Value::Null) };
    Ok(Value::from(&s[..byte_offset(s, n)]))
}

/// `right(s, n)`: the last `n` characters.
pub fn right(args: &[Value]) -> Result<Value> {
    let Some(s) = text("right", arg(args, 0))? else { return Ok(Value::Null) };
    let Some(n) = count("right", "length", arg(args, 1))? else { return Ok(Value::Null) };
    let chars = s.chars().count();
    Ok(Value::from(&s[byte_offset(s, chars.saturating_sub(n))..]))
}

/// `substring(s, start[, length])`, with `start` counted from 0.
pub fn substring(args: &[Value]) -> Result<Value> {
    // A null argument gives null before any other argument is checked (`substring('abc', -1, null)` is null).
    if args.iter().any(|a| matches!(a, Value::Null)) {
        return Ok(Value::Null);
    }
    let Some(s) = text("substring", arg(args, 0))? else { return Ok(Value::Null) };
    let Some(start) = count("substring", "start", arg(args, 1))? else { return Ok(Value::Null) };
    let rest = &s[byte_offset(s, start)..];
    Ok(match args.get(2) {
        None => Value::from(rest),
        Some(length) => match count("substring", "length", length)? {
            Some(n) => Value::from(&rest[..byte_offset(rest, n)]),
            None => Value::Null,
        },
    })
}

fn map_text(function: &str, args: &[Value], f: impl Fn(&str) -> String) -> Result<Value> {
    Ok(text(function, arg(args, 0))?.map_or(Value::Null, |s| Value::from(f(s))))
}

pub fn to_upper(args: &[Value]) -> Result<Value> {
    map_text("toUpper", args, str::to_uppercase)
}

pub fn to_lower(args: &[Value]) -> Result<Value> {
    map_text("toLower", args, str::to_lowercase)
}

/// Whitespace as Neo4j trims it (Java's `Character.isWhitespace`): not the no-break spaces U+00A0, U+2007 and
/// U+202F, nor U+0085, which Unicode counts as white space; but the separators U+001C to U+001F, which it does not.
fn is_whitespace(c: char) -> bool {
    match c {
        '\u{1c}'..='\u{1f}' => true,
        '\u{85}' | '\u{a0}' | '\u{2007}' | '\u{202f}' => false,
        _ => c.is_whitespace(),
    }
}

/// `trim(s)`: without leading and trailing whitespace.
pub fn trim(args: &[Value]) -> Result<Value> {
    map_text("trim", args, |s| s.trim_matches(is_whitespace).to_string())
}

#[derive(Clone, Copy)]
enum Side {
    Leading,
    Trailing,
    Both,
}

/// `ltrim`, `rtrim`, `btrim`: without leading/trailing whitespace, or the characters of the second argument.
fn trim_side(function: &str, side: Side, args: &[Value]) -> Result<Value> {
    let Some(s) = text(function, arg(args, 0))? else { return Ok(Value::Null) };
    let chars = match args.get(1) {
        None => None,
        Some(v) => match text(function, v)? {
            Some(chars) => Some(chars),
            None => return Ok(Value::Null),
        },
    };
    let strip = |c: char| match chars {
        None => is_whitespace(c),
        Some(chars) => chars.contains(c),
    };
    Ok(Value::from(match side {
        Side::Leading => s.trim_start_matches(strip),
        Side::Trailing => s.trim_end_matches(strip),
        Side::Both => s.trim_matches(strip),
    }))
}

/// `trim(side [character] FROM s)`: like `btrim`, `ltrim` and `rtrim` (arguments in that order), but the
/// character to strip must be exactly one.
fn trim_from(side: Side, args: &[Value]) -> Result<Value> {
    if let Some(Value::String(chars)) = args.get(1) {
        if chars.chars().count() != 1 {
            return Err(CypherError::argument(
                "InvalidArgumentValue",
                format!("trim() strips one character, got {} in '{chars}'", chars.chars().count()),
            ));
        }
    }
    trim_side("trim", side, args)
}

pub fn trim_both_from(args: &[Value]) -> Result<Value> {
    trim_from(Side::Both, args)
}

pub fn trim_leading_from(args: &[Value]) -> Result<Value> {
    trim_from(Side::Leading, args)
}

pub fn trim_trailing_from(args: &[Value]) -> Result<Value> {
    trim_from(Side::Trailing, args)
}

pub fn ltrim(args: &[Value]) -> Result<Value> {
    trim_side("ltrim", Side::Leading, args)
}

pub fn rtrim(args: &[Value]) -> Result<Value> {
    trim_side("rtrim", Side::Trailing, args)
}

pub fn btrim(args: &[Value]) -> Result<Value> {
    trim_side("btrim", Side::Both, args)
}

/// `replace(s, search, replacement)`: every occurrence. An empty `search` matches between all characters.
pub fn replace(args: &[Value]) -> Result<Value> {
    let s = text("replace", arg(args, 0))?;
    let search = text("replace", arg(args, 1))?;
    let replacement = text("replace", arg(args, 2))?;
    Ok(match (s, search, replacement) {
        (Some(s), Some(search), Some(replacement)) => {
            if replacement.len() > search.len() {
                // Each match grows the string by the difference; an empty search matches between every char.
                let matches = if search.is_empty() { s.chars().count() + 1 } else { s.matches(search).count() };
                let grown = matches.saturating_mul(replacement.len() - search.len());
                crate::arith::check_string_len(s.len().saturating_add(grown), "replace()")?;
            }
            Value::from(s.replace(search, replacement))
        }
        _ => Value::Null,
    })
}

/// `split(s, delimiter)`, where the delimiter is a string or a list of strings (any of which splits). Empty parts
/// are kept; an empty delimiter splits into characters.
pub fn split(args: &[Value]) -> Result<Value> {
    let Some(s) = text("split", arg(args, 0))? else { return Ok(Value::Null) };
    let delimiters: Vec<&str> = match arg(args, 1) {
        Value::Null => return Ok(Value::Null),
        Value::String(d) => vec![d],
        Value::List(items) => {
            let mut delimiters = Vec::with_capacity(items.len());
            for item in items.iter() {
                match text("split", item)? {
                    Some(d) => delimiters.push(d),
                    None => return Ok(Value::Null),
                }
            }
            delimiters
        }
        other => return Err(invalid_type("split", "a string or a list of strings", other)),
    };
    let non_empty: Vec<&str> = delimiters.iter().copied().filter(|d| !d.is_empty()).collect();
    if non_empty.is_empty() && !delimiters.is_empty() {
        // Into characters; the empty string is one empty part, as with any other delimiter.
        if s.is_empty() {
            return Ok(Value::list(vec![Value::from("")]));
        }
        return Ok(Value::list(s.chars().map(|c| Value::from(c.to_string())).collect()));
    }
    let mut parts = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < s.len() {
        match non_empty.iter().find(|d| s[i..].starts_with(**d)) {
            Some(d) => {
                parts.push(Value::from(&s[start..i]));
                i += d.len();
                start = i;
            }
            None => i += s[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
    parts.push(Value::from(&s[start..]));
    Ok(Value::list(parts))
}

/// `char_length(s)`: the number of characters.
pub fn char_length(args: &[Value]) -> Result<Value> {
    Ok(text("char_length", arg(args, 0))?.map_or(Value::Null, |s| Value::Int(s.chars().count() as i64)))
}

/// The normalization form named by a call's second argument (parsed from the keyword `NFC`, `NFD`, `NFKC` or
/// `NFKD`, or given as a string), NFC when absent.
fn normal_form(function: &str, args: &[Value]) -> Result<&'static str> {
    match args.get(1) {
        None | Some(Value::Null) => Ok("NFC"),
        Some(Value::String(form)) => {
            ["NFC", "NFD", "NFKC", "NFKD"].into_iter().find(|f| f.eq_ignore_ascii_case(form)).ok_or_else(|| {
                out_of_range(function, format!("unknown normalization form '{form}' (NFC, NFD, NFKC or NFKD)"))
            })
        }
        Some(other) => Err(invalid_type(function, "a normalization form", other)),
    }
}

fn normalized(s: &str, form: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    match form {
        "NFD" => s.nfd().collect(),
        "NFKC" => s.nfkc().collect(),
        "NFKD" => s.nfkd().collect(),
        _ => s.nfc().collect(),
    }
}

/// `normalize(s [, NFC | NFD | NFKC | NFKD])`: `s` in that Unicode normalization form.
pub fn normalize(args: &[Value]) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let form = normal_form("normalize", args)?;
    map_text("normalize", args, |s| normalized(s, form))
}

/// `s IS [NOT] [form] NORMALIZED`: whether `s` is in that form; null for anything but a string.
pub fn is_normalized(args: &[Value]) -> Result<Value> {
    let form = normal_form("IS NORMALIZED", args)?;
    Ok(match arg(args, 0) {
        Value::String(s) => Value::Bool(normalized(s, form) == **s),
        _ => Value::Null,
    })
}
