//! Java's regular-expression syntax (which Neo4j takes) rewritten into `fancy_regex`'s, where the two read the same
//! text differently: classes Java keeps to ASCII (`\w`, `\d`, `\s`, the POSIX `\p{Alpha}` family), Java's
//! escapes the other lacks or reads otherwise (`\h`, `\v`, `\R`, `\Z`, `\e`, `\cX`, octal `\0nn`, a backslash
//! before any other sign being that sign, where `\<` is a word boundary to the `regex` crate), Java's line
//! terminators for `.`, quoting (`\Q...\E`), and the flags only Java has (`d`, `c`, `U`, which to the `regex`
//! crate would mean lazy quantifiers).
//!
//! Left as they are, and so answered as the `regex` crate answers: `(?i)` folds every letter where Java folds
//! ASCII alone unless `(?u)` is given, `^` and `$` under `(?m)` know `\n` alone, and backreferences under `(?i)`
//! compare exactly.

/// Java's line terminators, as a class body.
const LINE_TERMINATORS: &str = "\\n\\r\\x{85}\\x{2028}\\x{2029}";
/// `\h`: horizontal white space.
const HORIZONTAL: &str = "\\t\\x{20}\\x{a0}\\x{1680}\\x{180e}\\x{2000}-\\x{200a}\\x{202f}\\x{205f}\\x{3000}";
/// `\v`: vertical white space.
const VERTICAL: &str = "\\n\\x{0b}\\x{0c}\\r\\x{85}\\x{2028}\\x{2029}";

/// The pattern to give `fancy_regex` for Java's `pattern`, wrapped to match whole strings only (Java's `matches`).
pub(super) fn full_match_pattern(pattern: &str) -> String {
    let pattern = unquote(pattern);
    let flags = Flags::of(&pattern);
    let body = translate(&pattern, &flags);
    // A `#` comment of `(?x)` runs to the end of the line: it would swallow the closing of the wrapper.
    let end = if flags.extended_at_end { "\n" } else { "" };
    format!("^(?:{body}{end})$")
}

/// What the pattern's flag groups say about the whole of it.
#[derive(Default)]
struct Flags {
    /// `s` is turned on somewhere: `.` is left as it is (approximate for a scoped `(?s:...)`).
    dot_all: bool,
    /// `d` (UNIX_LINES) is turned on somewhere: `.` excludes `\n` alone, as the `regex` crate's does.
    unix_lines: bool,
    /// `U` (UNICODE_CHARACTER_CLASS) is turned on somewhere: `\w`, `\d` and `\s` keep their Unicode meaning.
    unicode_classes: bool,
    /// `x` is on after the last flag group that sets or clears it.
    extended_at_end: bool,
}

impl Flags {
    fn of(pattern: &str) -> Flags {
        let mut flags = Flags::default();
        for (at, _) in pattern.match_indices("(?") {
            if at > 0 && pattern.as_bytes()[at - 1] == b'\\' {
                continue;
            }
            let rest = &pattern[at + 2..];
            let letters = rest.split(|c: char| !c.is_ascii_alphabetic() && c != '-').next().unwrap_or("");
            let (on, off) = letters.split_once('-').unwrap_or((letters, ""));
            flags.dot_all |= on.contains('s');
            flags.unix_lines |= on.contains('d');
            flags.unicode_classes |= on.contains('U');
            let scoped = rest[letters.len()..].starts_with(':');
            if !scoped && on.contains('x') {
                flags.extended_at_end = true;
            } else if !scoped && off.contains('x') {
                flags.extended_at_end = false;
            }
        }
        flags
    }
}

/// `pattern` with Java's quoting, `\Q...\E` (to the end when there is no `\E`), written as escaped characters.
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
            for c in literal.chars() {
                push_literal(&mut out, c);
            }
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

/// `c` matched as itself in any context: inside or outside a class, with or without `(?x)`.
fn push_literal(out: &mut String, c: char) {
    if c.is_alphanumeric() || c == '_' {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:x}}}", c as u32));
    }
}

fn translate(pattern: &str, flags: &Flags) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push('\\');
                    break;
                };
                escape(&mut out, next, &mut chars, depth > 0, flags);
            }
            '(' if chars.peek() == Some(&'?') => {
                chars.next();
                out.push_str("(?");
                flag_group(&mut out, &mut chars);
            }
            '[' => {
                depth += 1;
                out.push(c);
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            '.' if depth == 0 && !flags.dot_all && !flags.unix_lines => {
                out.push_str(&format!("[^{LINE_TERMINATORS}]"));
            }
            _ => out.push(c),
        }
    }
    out
}

/// After `(?`: copies the flags the `regex` crate shares with Java, and drops Java's own (`d`, `c`, `U`; the
/// last is lazy quantifiers to the `regex` crate). Anything else after `(?` (`:`, `=`, `<name>`, ...) is copied
/// by the caller's loop.
fn flag_group(out: &mut String, chars: &mut std::iter::Peekable<std::str::Chars>) {
    let mut letters = String::new();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_alphabetic() || c == '-' {
            letters.push(c);
            chars.next();
        } else {
            break;
        }
    }
    if letters.is_empty() {
        return;
    }
    let kept: String = letters.chars().filter(|c| !matches!(c, 'd' | 'c' | 'U')).collect();
    let closes = chars.peek() == Some(&')');
    if closes && kept.trim_end_matches('-').is_empty() {
        // `(?U)` and the like: nothing left to say.
        out.truncate(out.len() - 2);
        chars.next();
        return;
    }
    out.push_str(kept.strip_suffix('-').unwrap_or(&kept));
}

/// The escape `\next` (the backslash read), in a class or not.
fn escape(
    out: &mut String,
    next: char,
    chars: &mut std::iter::Peekable<std::str::Chars>,
    in_class: bool,
    flags: &Flags,
) {
    match next {
        'w' | 'W' | 'd' | 'D' | 's' | 'S' if flags.unicode_classes => {
            out.push('\\');
            out.push(next);
        }
        'w' | 'W' => push_set(out, "0-9A-Za-z_", next == 'W'),
        'd' | 'D' => push_set(out, "0-9", next == 'D'),
        's' | 'S' => push_set(out, "\\t\\n\\x0B\\x0C\\r\\x{20}", next == 'S'),
        'h' | 'H' => push_set(out, HORIZONTAL, next == 'H'),
        'v' | 'V' => push_set(out, VERTICAL, next == 'V'),
        // Atomic, as Java's: `\R{2}` does not take `\r\n` apart.
        'R' if !in_class => out.push_str(&format!("(?>\\r\\n|[{VERTICAL}])")),
        'Z' if !in_class => out.push_str(&format!("(?=(?:\\r\\n|[{LINE_TERMINATORS}])?\\z)")),
        'e' => out.push_str("\\x{1b}"),
        'c' => match chars.next() {
            Some(control) if control.is_ascii() => out.push_str(&format!("\\x{{{:x}}}", control as u32 ^ 0x40)),
            other => {
                out.push_str("\\c");
                out.extend(other);
            }
        },
        '0' => {
            // Java's octal escape: one or two octal digits, or three when the first is 0-3.
            let mut digits = String::new();
            while digits.len() < 3 {
                match chars.peek() {
                    Some(&d @ '0'..='7') if digits.len() < 2 || digits.starts_with(['0', '1', '2', '3']) => {
                        digits.push(d);
                        chars.next();
                    }
                    _ => break,
                }
            }
            match u32::from_str_radix(&digits, 8) {
                Ok(code) => out.push_str(&format!("\\x{{{code:x}}}")),
                Err(_) => out.push_str("\\0"),
            }
        }
        'p' | 'P' if chars.peek() == Some(&'{') => {
            let name: String = chars.clone().skip(1).take_while(|&c| c != '}').collect();
            match posix_class(&name) {
                Some(body) => {
                    chars.nth(name.chars().count() + 1);
                    push_set(out, body, next == 'P');
                }
                None => {
                    out.push('\\');
                    out.push(next);
                }
            }
        }
        // Java reads a backslash before a sign as the sign itself (`\<` is `<`, which the `regex` crate would
        // take for a word boundary).
        c if !c.is_ascii_alphanumeric() => push_literal(out, c),
        c => {
            out.push('\\');
            out.push(c);
        }
    }
}

/// A set, as a class of its own outside a class and nested inside one.
fn push_set(out: &mut String, body: &str, negated: bool) {
    out.push_str(if negated { "[^" } else { "[" });
    out.push_str(body);
    out.push(']');
}

/// Java's POSIX classes, which are US-ASCII: the class body for `\p{name}`.
fn posix_class(name: &str) -> Option<&'static str> {
    Some(match name {
        "Lower" => "a-z",
        "Upper" => "A-Z",
        "ASCII" => "\\x00-\\x7f",
        "Alpha" => "a-zA-Z",
        "Digit" => "0-9",
        "Alnum" => "0-9a-zA-Z",
        "Punct" => "!-/:-@\\[-`{-~",
        "Graph" => "!-~",
        "Print" => "\\x20-~",
        "Blank" => "\\x20\\t",
        "Cntrl" => "\\x00-\\x1f\\x7f",
        "XDigit" => "0-9a-fA-F",
        "Space" => "\\t\\n\\x0B\\x0C\\r\\x20",
        _ => return None,
    })
}
