//! The lexer: query text to tokens with byte spans.
//!
//! Keywords are not separate tokens: openCypher keywords are case-insensitive and most may also be used as
//! names (`MATCH (count) RETURN count.end`), so the parser decides from context whether an identifier is a
//! keyword.

use crate::error::{CypherError, Position, Result};

/// A half-open byte range in the query text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A name or keyword; `quoted` when written in backticks (then never a keyword).
    Ident {
        name: String,
        quoted: bool,
    },
    Int(i64),
    /// An integer literal too large for i64 (an error unless negated to exactly i64::MIN).
    BigInt(String),
    Float(f64),
    Str(String),
    Param(String),
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Dot,
    DotDot,
    Colon,
    Semicolon,
    Pipe,
    /// `&` and `!`: conjunction and negation in label expressions.
    Amp,
    Bang,
    /// `$` before `(`: a label computed by the expression in the parentheses (`SET n:$(name)`).
    Dollar,
    Plus,
    PlusEq,
    Minus,
    Star,
    Slash,
    Percent,
    Caret,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    RegexMatch,
    Arrow,     // ->
    LeftArrow, // <-
    Eof,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

fn err_at(text: &str, offset: usize, message: impl Into<String>) -> CypherError {
    CypherError::syntax("InvalidSyntax", message).at(Position::locate(text, offset))
}

/// Splits `text` into tokens, ending with [`Tok::Eof`].
pub fn tokenize(text: &str) -> Result<Vec<Token>> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        // Whitespace and comments.
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let start = i;
            i += 2;
            loop {
                if i + 1 >= bytes.len() {
                    return Err(err_at(text, start, "unterminated comment"));
                }
                if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        let start = i;
        let ch = text[i..].chars().next().unwrap();
        if ch.is_alphabetic() || ch == '_' {
            let mut j = i;
            for (k, c) in text[i..].char_indices() {
                if c.is_alphanumeric() || c == '_' {
                    j = i + k + c.len_utf8();
                } else {
                    break;
                }
            }
            tokens
                .push(Token { tok: Tok::Ident { name: text[i..j].to_string(), quoted: false }, span: Span::new(i, j) });
            i = j;
            continue;
        }
        if ch == '`' {
            let (name, j) = lex_quoted_name(text, start)?;
            tokens.push(Token { tok: Tok::Ident { name, quoted: true }, span: Span::new(i, j) });
            i = j;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(|b| b.is_ascii_digit())) {
            let (tok, j) = lex_number(text, i)?;
            tokens.push(Token { tok, span: Span::new(i, j) });
            i = j;
            continue;
        }
        if c == b'\'' || c == b'"' {
            let (s, j) = lex_string(text, i)?;
            tokens.push(Token { tok: Tok::Str(s), span: Span::new(i, j) });
            i = j;
            continue;
        }
        if c == b'$' && bytes.get(i + 1) == Some(&b'(') {
            tokens.push(Token { tok: Tok::Dollar, span: Span::new(i, i + 1) });
            i += 1;
            continue;
        }
        if c == b'$' {
            let mut j = i + 1;
            let name;
            if bytes.get(j) == Some(&b'`') {
                (name, j) = lex_quoted_name(text, j)?;
            } else {
                j = text[j..].find(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(text.len(), |k| j + k);
                name = text[i + 1..j].to_string();
                if name.is_empty() {
                    return Err(err_at(text, i, "expected a parameter name after '$'"));
                }
            }
            tokens.push(Token { tok: Tok::Param(name), span: Span::new(i, j) });
            i = j;
            continue;
        }
        let two = |a: u8, b: u8| c == a && bytes.get(i + 1) == Some(&b);
        let (tok, len) = if two(b'.', b'.') {
            (Tok::DotDot, 2)
        } else if two(b'<', b'>') || two(b'!', b'=') {
            (Tok::Ne, 2)
        } else if two(b'<', b'=') {
            (Tok::Le, 2)
        } else if two(b'>', b'=') {
            (Tok::Ge, 2)
        } else if two(b'=', b'~') {
            (Tok::RegexMatch, 2)
        } else if two(b'-', b'>') {
            (Tok::Arrow, 2)
        } else if two(b'<', b'-') {
            (Tok::LeftArrow, 2)
        } else if two(b'+', b'=') {
            (Tok::PlusEq, 2)
        } else {
            let t = match c {
                b'(' => Tok::LParen,
                b')' => Tok::RParen,
                b'[' => Tok::LBracket,
                b']' => Tok::RBracket,
                b'{' => Tok::LBrace,
                b'}' => Tok::RBrace,
                b',' => Tok::Comma,
                b'.' => Tok::Dot,
                b':' => Tok::Colon,
                b';' => Tok::Semicolon,
                b'|' => Tok::Pipe,
                b'&' => Tok::Amp,
                b'!' => Tok::Bang,
                b'+' => Tok::Plus,
                b'-' => Tok::Minus,
                b'*' => Tok::Star,
                b'/' => Tok::Slash,
                b'%' => Tok::Percent,
                b'^' => Tok::Caret,
                b'=' => Tok::Eq,
                b'<' => Tok::Lt,
                b'>' => Tok::Gt,
                _ => {
                    // Look-alike dashes and brackets pasted from documents are refused by name: they are not
                    // the operators they resemble.
                    return Err(match ch {
                        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}' => {
                            CypherError::syntax(
                                "InvalidUnicodeCharacter",
                                format!("'{ch}' (U+{:04X}) is not a minus sign or dash; use '-'", ch as u32),
                            )
                            .at(Position::locate(text, i))
                        }
                        // Escaped when it is a control character: an error message must not carry a terminal
                        // escape sequence to whoever prints it.
                        _ if ch.is_control() => {
                            err_at(text, i, format!("unexpected character '{}'", ch.escape_unicode()))
                        }
                        _ => err_at(text, i, format!("unexpected character '{ch}'")),
                    });
                }
            };
            (t, 1)
        };
        tokens.push(Token { tok, span: Span::new(i, i + len) });
        i += len;
    }
    tokens.push(Token { tok: Tok::Eof, span: Span::new(text.len(), text.len()) });
    Ok(tokens)
}

/// A name in backticks starting at byte `start` (a doubled backtick stands for one): the name and the offset
/// just past its closing backtick.
fn lex_quoted_name(text: &str, start: usize) -> Result<(String, usize)> {
    let bytes = text.as_bytes();
    let mut name = String::new();
    let mut j = start + 1;
    loop {
        match bytes.get(j) {
            None => return Err(err_at(text, start, "unterminated quoted name")),
            Some(b'`') if bytes.get(j + 1) == Some(&b'`') => {
                name.push('`');
                j += 2;
            }
            Some(b'`') => return Ok((name, j + 1)),
            Some(_) => {
                let c = text[j..].chars().next().expect("a character at a boundary");
                name.push(c);
                j += c.len_utf8();
            }
        }
    }
}

fn lex_number(text: &str, start: usize) -> Result<(Tok, usize)> {
    let bytes = text.as_bytes();
    let mut i = start;
    let ident_tail = |j: usize| j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_');
    if bytes[i] == b'0' && matches!(bytes.get(i + 1), Some(b'x') | Some(b'X')) {
        i += 2;
        let digits_start = i;
        while ident_tail(i) {
            i += 1;
        }
        let digits = &without_separators(&text[digits_start..i], true);
        return match i64::from_str_radix(digits, 16) {
            Ok(v) => Ok((Tok::Int(v), i)),
            Err(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Ok((Tok::BigInt(format!("{}{digits}", &text[start..digits_start])), i))
            }
            Err(_) => Err(err_at(text, start, format!("invalid hexadecimal integer '{}'", &text[start..i]))),
        };
    }
    if bytes[i] == b'0' && matches!(bytes.get(i + 1), Some(b'o') | Some(b'O')) {
        i += 2;
        let digits_start = i;
        while ident_tail(i) {
            i += 1;
        }
        let digits = &without_separators(&text[digits_start..i], true);
        return match i64::from_str_radix(digits, 8) {
            Ok(v) => Ok((Tok::Int(v), i)),
            Err(_) if !digits.is_empty() && digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) => {
                Ok((Tok::BigInt(format!("{}{digits}", &text[start..digits_start])), i))
            }
            Err(_) => Err(err_at(text, start, format!("invalid octal integer '{}'", &text[start..i]))),
        };
    }
    i = digit_run(bytes, i);
    let mut is_float = false;
    if i < bytes.len() && bytes[i] == b'.' && bytes.get(i + 1).is_some_and(|b| b.is_ascii_digit()) {
        is_float = true;
        i = digit_run(bytes, i + 1);
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            is_float = true;
            i = digit_run(bytes, j);
        }
    }
    if ident_tail(i) {
        while ident_tail(i) {
            i += 1;
        }
        return Err(err_at(text, start, format!("invalid number '{}'", &text[start..i])));
    }
    let literal = &without_separators(&text[start..i], false);
    if is_float {
        let v: f64 = literal.parse().map_err(|_| err_at(text, start, format!("invalid number '{literal}'")))?;
        if v.is_infinite() {
            return Err(CypherError::syntax(
                "FloatingPointOverflow",
                format!("floating point number is too large: {literal}"),
            )
            .at(Position::locate(text, start)));
        }
        return Ok((Tok::Float(v), i));
    }
    if let Some(octal) = literal.strip_prefix('0').filter(|rest| !rest.is_empty()) {
        // The older octal form (`017`), which Neo4j 5 no longer reads: refused rather than read as a decimal a
        // reader would expect, or as the octal it once was.
        return Err(err_at(
            text,
            start,
            format!(
                "the octal integer literal syntax `{literal}` is no longer supported, please use `0o{octal}` instead"
            ),
        ));
    }
    match literal.parse::<i64>() {
        Ok(v) => Ok((Tok::Int(v), i)),
        Err(_) => Ok((Tok::BigInt(literal.to_string()), i)),
    }
}

/// The end of the digits from `i`, where single underscores may separate digits (`1_000`, as Neo4j reads them).
fn digit_run(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len()
        && (bytes[i].is_ascii_digit()
            || (bytes[i] == b'_'
                && i > 0
                && bytes[i - 1].is_ascii_digit()
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)))
    {
        i += 1;
    }
    i
}

/// `digits` without the underscores that separate them; unchanged (so invalid) when an underscore is doubled or
/// last, or first unless `leading` (after `0x`, `0o`).
fn without_separators(digits: &str, leading: bool) -> std::borrow::Cow<'_, str> {
    let b = digits.as_bytes();
    let misplaced = digits.contains("__") || b.last() == Some(&b'_') || (!leading && b.first() == Some(&b'_'));
    if misplaced || !digits.contains('_') {
        return digits.into();
    }
    digits.replace('_', "").into()
}

fn lex_string(text: &str, start: usize) -> Result<(String, usize)> {
    let quote = text.as_bytes()[start] as char;
    let mut out = String::new();
    let mut chars = text[start + 1..].char_indices();
    while let Some((k, c)) = chars.next() {
        let at = start + 1 + k;
        if c == quote {
            return Ok((out, at + 1));
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, e)) = chars.next() else { break };
        match e {
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'b' | 'B' => out.push('\u{8}'),
            'f' | 'F' => out.push('\u{c}'),
            'n' | 'N' => out.push('\n'),
            'r' | 'R' => out.push('\r'),
            't' | 'T' => out.push('\t'),
            // Neo4j has no 8-digit `\U` escape and keeps `\U` as written (`'C:\Users'`); openCypher's is read when
            // eight hexadecimal digits follow.
            'U' if chars.clone().take(8).filter(|(_, d)| d.is_ascii_hexdigit()).count() != 8 => {
                out.push('\\');
                out.push('U');
            }
            'u' | 'U' => {
                let digits = if e == 'u' { 4 } else { 8 };
                let mut code = String::new();
                for _ in 0..digits {
                    match chars.next() {
                        Some((_, d)) if d.is_ascii_hexdigit() => code.push(d),
                        _ => return Err(err_at(text, at, "invalid unicode escape in string")),
                    }
                }
                let invalid = || err_at(text, at, "invalid unicode escape in string");
                let unit = u32::from_str_radix(&code, 16).map_err(|_| invalid())?;
                // A UTF-16 surrogate pair written as two escapes (`\uD83D\uDE00`) is one character.
                if (0xD800..0xDC00).contains(&unit) && e == 'u' {
                    let mut low = String::new();
                    let mut ahead = chars.clone();
                    if matches!(ahead.next(), Some((_, '\\'))) && matches!(ahead.next(), Some((_, 'u'))) {
                        for _ in 0..4 {
                            match ahead.next() {
                                Some((_, d)) if d.is_ascii_hexdigit() => low.push(d),
                                _ => break,
                            }
                        }
                    }
                    let low = u32::from_str_radix(&low, 16).ok().filter(|l| (0xDC00..0xE000).contains(l));
                    let Some(low) = low else { return Err(invalid()) };
                    chars = ahead;
                    out.push(char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)).ok_or_else(invalid)?);
                    continue;
                }
                out.push(char::from_u32(unit).ok_or_else(invalid)?);
            }
            // Neo4j keeps an unknown escape as written, so that `'\d+'` is the regular expression it looks like.
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Err(err_at(text, start, "unterminated string literal"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        tokenize(text).unwrap().into_iter().map(|t| t.tok).collect()
    }

    /// An error after a quoted parameter name points into the whole text (it once pointed into the rest after
    /// the `$`, which could fall inside a character and panic).
    #[test]
    fn errors_after_a_quoted_parameter_point_at_the_right_place() {
        let text = "RETURN $`p`, `Tμۢ` \u{17}";
        let e = tokenize(text).unwrap_err();
        let at = e.position.expect("a position");
        assert_eq!(&text[at.offset..], "\u{17}");
        assert_eq!((at.line, at.column), (1, 20));
        assert_eq!(toks("$`a``b`"), vec![Tok::Param("a`b".into()), Tok::Eof]);
        assert!(tokenize("RETURN $`open").is_err());
    }

    /// A control character is named escaped: printed raw, an ESC would reach the terminal of whoever shows the
    /// error.
    #[test]
    fn control_characters_are_escaped_in_errors() {
        let e = tokenize("RETURN \u{1b}[31m").unwrap_err();
        assert!(e.message.contains("'\\u{1b}'") && !e.message.contains('\u{1b}'), "{}", e.message);
    }

    #[test]
    fn lexes_patterns_and_literals() {
        let t = toks("MATCH (a)-[:`T x`*1..2]->(b) WHERE a.x <> 1.5e3 RETURN $p, 'it''s', \"q\\n\" // c");
        assert!(t.contains(&Tok::Ident { name: "T x".into(), quoted: true }));
        assert!(t.contains(&Tok::DotDot));
        assert!(t.contains(&Tok::Arrow));
        assert!(t.contains(&Tok::Ne));
        assert!(t.contains(&Tok::Float(1500.0)));
        assert!(t.contains(&Tok::Param("p".into())));
        assert!(t.contains(&Tok::Str("q\n".into())));
        assert_eq!(t.last(), Some(&Tok::Eof));
    }

    #[test]
    fn unknown_escapes_stay_as_written() {
        assert_eq!(toks(r"'\d+\.\q'")[0], Tok::Str(r"\d+\.\q".into()));
        assert!(tokenize(r"'\uH'").is_err());
        assert_eq!(toks(r"'C:\Users' '\U0001F600'")[..2], [Tok::Str(r"C:\Users".into()), Tok::Str("\u{1F600}".into())]);
    }

    #[test]
    fn numbers_in_every_base() {
        assert_eq!(
            toks("0x1F 0o17 9223372036854775808")[..3],
            [Tok::Int(31), Tok::Int(15), Tok::BigInt("9223372036854775808".into())]
        );
        assert!(tokenize("12abc").is_err());
        // A leading zero was the older octal form, which Neo4j 5 refuses; a float is read in decimal whatever its
        // first digit.
        assert_eq!(toks("0 07.5")[..2], [Tok::Int(0), Tok::Float(7.5)]);
        for old in ["0777", "00", "09", "01000000000000000000000"] {
            let e = tokenize(old).unwrap_err();
            assert!(e.message.contains("no longer supported"), "{old}: {e}");
        }
        assert_eq!(
            toks("1_000 0x_1_F 0o1_7 1_0.5_5 1e1_0 9_223_372_036_854_775_808")[..6],
            [
                Tok::Int(1000),
                Tok::Int(31),
                Tok::Int(15),
                Tok::Float(10.55),
                Tok::Float(1e10),
                Tok::BigInt("9223372036854775808".into())
            ]
        );
        for misplaced in ["1__0", "1_", "1.5_", "1.5e_3", "0x1_", "0x1__F"] {
            assert!(tokenize(misplaced).is_err(), "{misplaced}");
        }
        assert_eq!(toks(".5")[0], Tok::Float(0.5));
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = tokenize("RETURN 'abc").unwrap_err();
        assert_eq!(e.position.unwrap().column, 8);
        let e = tokenize("RETURN\n  #").unwrap_err();
        assert_eq!((e.position.unwrap().line, e.position.unwrap().column), (2, 3));
    }
}
