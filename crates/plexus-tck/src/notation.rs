//! The TCK's value notation: how expected results and parameters are written in the feature files.
//!
//! ```text
//! null  true  42  -0.5  1e9  NaN  Infinity  'it\'s'  [1, 'a']  {k: 1, `odd key`: null}
//! (:A:B {p: 1})  [:T {p: 1}]  <(:A)-[:T]->(:B)<-[:S]-()>
//! ```
//!
//! [`parse`] reads the notation, [`TckValue`]'s `Display` writes it back (a round trip keeps the value), and
//! [`TckValue::canonical`] gives a string that is equal for two values exactly when the TCK considers them equal:
//! labels are a set, map keys are unordered, `NaN` equals `NaN`, `-0.0` equals `0.0`, integers never equal floats,
//! and lists may be compared ignoring the order of their elements.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

/// A property map or a map value.
pub type TckMap = BTreeMap<String, TckValue>;

/// A value as the TCK writes it. Graph entities carry no ids: the notation has none.
#[derive(Clone, Debug, PartialEq)]
pub enum TckValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    List(Vec<TckValue>),
    Map(TckMap),
    Node(TckNode),
    Rel(TckRel),
    Path(TckPath),
}

/// `(:A:B {p: 1})`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TckNode {
    pub labels: Vec<String>,
    pub props: TckMap,
}

/// `[:T {p: 1}]`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TckRel {
    pub rel_type: String,
    pub props: TckMap,
}

/// `<(:A)-[:T]->(:B)>`: a start node and hops, each a relationship traversed forwards (`-[]->`) or backwards
/// (`<-[]-`) to the next node.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TckPath {
    pub start: TckNode,
    pub hops: Vec<Hop>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Hop {
    pub rel: TckRel,
    pub forward: bool,
    pub node: TckNode,
}

/// Parses one value; the whole text must be consumed (surrounding whitespace aside).
pub fn parse(text: &str) -> Result<TckValue, String> {
    let mut p = Parser { text, pos: 0 };
    let value = p.value()?;
    p.ws();
    if p.pos != text.len() {
        return Err(p.error("end of value"));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    fn error(&self, wanted: &str) -> String {
        format!("expected {wanted} at offset {} of `{}`", self.pos, self.text)
    }

    /// Consumes `token` (after whitespace) if it comes next.
    fn eat(&mut self, token: &str) -> bool {
        self.ws();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(&format!("`{token}`")))
        }
    }

    /// Consumes a keyword only when it is not the start of a longer word.
    fn eat_word(&mut self, word: &str) -> bool {
        self.ws();
        let rest = self.rest();
        if rest.starts_with(word) && !rest[word.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<TckValue, String> {
        self.ws();
        for (word, value) in [
            ("null", TckValue::Null),
            ("true", TckValue::Bool(true)),
            ("false", TckValue::Bool(false)),
            ("NaN", TckValue::Float(f64::NAN)),
            ("Infinity", TckValue::Float(f64::INFINITY)),
            ("-Infinity", TckValue::Float(f64::NEG_INFINITY)),
            ("Inf", TckValue::Float(f64::INFINITY)),
            ("-Inf", TckValue::Float(f64::NEG_INFINITY)),
        ] {
            if self.eat_word(word) {
                return Ok(value);
            }
        }
        match self.peek() {
            Some('\'') => self.string().map(TckValue::String),
            Some('{') => self.map().map(TckValue::Map),
            Some('(') => self.node().map(TckValue::Node),
            Some('<') => self.path().map(TckValue::Path),
            Some('[') => {
                let after = self.rest()[1..].trim_start();
                if after.starts_with(':') {
                    self.rel().map(TckValue::Rel)
                } else {
                    self.list().map(TckValue::List)
                }
            }
            Some(c) if c == '-' || c == '.' || c.is_ascii_digit() => self.number(),
            _ => Err(self.error("a value")),
        }
    }

    fn number(&mut self) -> Result<TckValue, String> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut end = start;
        if bytes.get(end) == Some(&b'-') {
            end += 1;
        }
        let mut float = false;
        while let Some(&b) = bytes.get(end) {
            match b {
                b'0'..=b'9' => {}
                b'.' | b'e' | b'E' => float = true,
                b'+' | b'-' if matches!(bytes[end - 1], b'e' | b'E') => {}
                _ => break,
            }
            end += 1;
        }
        let digits = &self.text[start..end];
        self.pos = end;
        let parsed = if float {
            digits.parse::<f64>().ok().map(TckValue::Float)
        } else {
            digits.parse::<i64>().ok().map(TckValue::Int)
        };
        parsed.ok_or_else(|| format!("bad number `{digits}` in `{}`", self.text))
    }

    /// A single-quoted string. `\\`, `\'`, `\"`, `\n`, `\t`, `\r`, `\b`, `\f` and `\uXXXX` are escapes; a backslash
    /// before anything else stands for itself.
    fn string(&mut self) -> Result<String, String> {
        self.expect("'")?;
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\'' => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, e @ ('\\' | '\'' | '"'))) => out.push(e),
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, 'r')) => out.push('\r'),
                    Some((_, 'b')) => out.push('\u{8}'),
                    Some((_, 'f')) => out.push('\u{c}'),
                    Some((j, 'u')) => {
                        let hex = self.rest().get(j + 1..j + 5).unwrap_or("");
                        match u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
                            Some(ch) if hex.len() == 4 => {
                                out.push(ch);
                                for _ in 0..4 {
                                    chars.next();
                                }
                            }
                            _ => out.push_str("\\u"),
                        }
                    }
                    Some((_, other)) => {
                        out.push('\\');
                        out.push(other);
                    }
                    None => out.push('\\'),
                },
                c => out.push(c),
            }
        }
        Err(self.error("closing `'`"))
    }

    /// An identifier (letters, digits, `_`) or a backticked name (a doubled backtick stands for one).
    fn name(&mut self) -> Result<String, String> {
        self.ws();
        if self.eat("`") {
            let mut out = String::new();
            loop {
                let rest = self.rest();
                let Some(i) = rest.find('`') else {
                    return Err(self.error("closing backtick"));
                };
                out.push_str(&rest[..i]);
                self.pos += i + 1;
                if self.rest().starts_with('`') {
                    out.push('`');
                    self.pos += 1;
                } else {
                    return Ok(out);
                }
            }
        }
        let len = self.rest().find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(self.rest().len());
        if len == 0 {
            return Err(self.error("a name"));
        }
        let name = self.rest()[..len].to_string();
        self.pos += len;
        Ok(name)
    }

    fn list(&mut self) -> Result<Vec<TckValue>, String> {
        self.expect("[")?;
        let mut items = Vec::new();
        if self.eat("]") {
            return Ok(items);
        }
        loop {
            items.push(self.value()?);
            if self.eat("]") {
                return Ok(items);
            }
            self.expect(",")?;
        }
    }

    fn map(&mut self) -> Result<TckMap, String> {
        self.expect("{")?;
        let mut map = TckMap::new();
        if self.eat("}") {
            return Ok(map);
        }
        loop {
            let key = self.name()?;
            self.expect(":")?;
            let value = self.value()?;
            map.insert(key, value);
            if self.eat("}") {
                return Ok(map);
            }
            self.expect(",")?;
        }
    }

    fn props(&mut self) -> Result<TckMap, String> {
        self.ws();
        if self.peek() == Some('{') {
            self.map()
        } else {
            Ok(TckMap::new())
        }
    }

    fn node(&mut self) -> Result<TckNode, String> {
        self.expect("(")?;
        let mut labels = Vec::new();
        while self.eat(":") {
            labels.push(self.name()?);
        }
        let props = self.props()?;
        self.expect(")")?;
        Ok(TckNode { labels, props })
    }

    fn rel(&mut self) -> Result<TckRel, String> {
        self.expect("[")?;
        self.expect(":")?;
        let rel_type = self.name()?;
        let props = self.props()?;
        self.expect("]")?;
        Ok(TckRel { rel_type, props })
    }

    fn path(&mut self) -> Result<TckPath, String> {
        self.expect("<")?;
        let start = self.node()?;
        let mut hops = Vec::new();
        loop {
            if self.eat(">") {
                return Ok(TckPath { start, hops });
            }
            let forward = if self.eat("<-") {
                false
            } else {
                self.expect("-")?;
                true
            };
            let rel = self.rel()?;
            self.expect(if forward { "->" } else { "-" })?;
            let node = self.node()?;
            hops.push(Hop { rel, forward, node });
        }
    }
}

// ----- writing -----

/// Writes a label, type or key bare when it is an identifier, backticked otherwise.
fn write_name(out: &mut String, name: &str) {
    let plain = name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if plain {
        out.push_str(name);
    } else {
        out.push('`');
        out.push_str(&name.replace('`', "``"));
        out.push('`');
    }
}

fn write_float(out: &mut String, f: f64, canonical: bool) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else if canonical && f == 0.0 {
        out.push_str("0.0");
    } else {
        // Debug is the shortest text that reads back as the same float, and always marks it as a float.
        let _ = write!(out, "{f:?}");
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

impl TckValue {
    /// A text equal for two values exactly when the TCK considers them equal. With `unordered_lists`, the elements
    /// of every list (at any depth) are compared as a multiset.
    pub fn canonical(&self, unordered_lists: bool) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(unordered_lists));
        out
    }

    /// `canonical`: `None` writes the value as it is, `Some(unordered)` writes its canonical form.
    fn write(&self, out: &mut String, canonical: Option<bool>) {
        match self {
            TckValue::Null => out.push_str("null"),
            TckValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            TckValue::Int(i) => {
                let _ = write!(out, "{i}");
            }
            TckValue::Float(f) => write_float(out, *f, canonical.is_some()),
            TckValue::String(s) => write_string(out, s),
            TckValue::List(items) => {
                let mut texts: Vec<String> = items
                    .iter()
                    .map(|v| {
                        let mut s = String::new();
                        v.write(&mut s, canonical);
                        s
                    })
                    .collect();
                if canonical == Some(true) {
                    texts.sort();
                }
                out.push('[');
                out.push_str(&texts.join(", "));
                out.push(']');
            }
            TckValue::Map(map) => write_map(out, map, canonical),
            TckValue::Node(n) => write_node(out, n, canonical),
            TckValue::Rel(r) => write_rel(out, r, canonical),
            TckValue::Path(p) => {
                out.push('<');
                write_node(out, &p.start, canonical);
                for hop in &p.hops {
                    out.push_str(if hop.forward { "-" } else { "<-" });
                    write_rel(out, &hop.rel, canonical);
                    out.push_str(if hop.forward { "->" } else { "-" });
                    write_node(out, &hop.node, canonical);
                }
                out.push('>');
            }
        }
    }
}

fn write_map(out: &mut String, map: &TckMap, canonical: Option<bool>) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_name(out, k);
        out.push_str(": ");
        v.write(out, canonical);
    }
    out.push('}');
}

fn write_node(out: &mut String, node: &TckNode, canonical: Option<bool>) {
    out.push('(');
    let mut labels: Vec<&String> = node.labels.iter().collect();
    if canonical.is_some() {
        labels.sort();
        labels.dedup();
    }
    for label in labels {
        out.push(':');
        write_name(out, label);
    }
    if !node.props.is_empty() {
        if !node.labels.is_empty() {
            out.push(' ');
        }
        write_map(out, &node.props, canonical);
    }
    out.push(')');
}

fn write_rel(out: &mut String, rel: &TckRel, canonical: Option<bool>) {
    out.push_str("[:");
    write_name(out, &rel.rel_type);
    if !rel.props.is_empty() {
        out.push(' ');
        write_map(out, &rel.props, canonical);
    }
    out.push(']');
}

impl fmt::Display for TckValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write(&mut out, None);
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str) -> String {
        parse(text).unwrap_or_else(|e| panic!("{e}")).to_string()
    }

    fn canon(text: &str, unordered: bool) -> String {
        parse(text).unwrap_or_else(|e| panic!("{e}")).canonical(unordered)
    }

    #[test]
    fn scalars() {
        assert_eq!(parse("null").unwrap(), TckValue::Null);
        assert_eq!(parse(" true ").unwrap(), TckValue::Bool(true));
        assert_eq!(parse("-9223372036854775808").unwrap(), TckValue::Int(i64::MIN));
        assert_eq!(parse("1e9").unwrap(), TckValue::Float(1e9));
        assert_eq!(parse("-1e-305").unwrap(), TckValue::Float(-1e-305));
        assert_eq!(parse("1.2635418652381264e305").unwrap(), TckValue::Float(1.2635418652381264e305));
        assert_eq!(parse(".5").unwrap(), TckValue::Float(0.5));
        assert_eq!(parse("-Infinity").unwrap(), TckValue::Float(f64::NEG_INFINITY));
        assert!(matches!(parse("NaN").unwrap(), TckValue::Float(f) if f.is_nan()));
        assert!(parse("-0.0").unwrap().to_string() == "-0.0");
        assert!(parse("99999999999999999999").is_err());
        assert!(parse("nullx").is_err());
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(parse(r"'\''").unwrap(), TckValue::String("'".into()));
        // What Literals6 [5] expects once the table cell is unescaped.
        assert_eq!(parse(r#"'a\\bcn5t\'"\\//\\"\''"#).unwrap(), TckValue::String(r#"a\bcn5t'"\//\"'"#.into()));
        assert_eq!(parse("'\nFoo\n'").unwrap(), TckValue::String("\nFoo\n".into()));
        assert_eq!(parse(r"'\u00e9\x'").unwrap(), TckValue::String("é\\x".into()));
        assert_eq!(round(r"'it\'s \\ ok'"), r"'it\'s \\ ok'");
        assert!(parse("'open").is_err());
    }

    #[test]
    fn containers() {
        assert_eq!(round("[1, [2, 'x'], []]"), "[1, [2, 'x'], []]");
        assert_eq!(round("{b: 1, a: {}}"), "{a: {}, b: 1}");
        assert_eq!(round("{``: 0, `a b`: 1, `x``y`: 2}"), "{``: 0, `a b`: 1, `x``y`: 2}");
        assert!(parse("[1, 2").is_err());
        assert!(parse("{a 1}").is_err());
    }

    #[test]
    fn entities() {
        assert_eq!(round("()"), "()");
        assert_eq!(round("(:A:B {p: 1, q: 'x'})"), "(:A:B {p: 1, q: 'x'})");
        assert_eq!(round("({p: 1})"), "({p: 1})");
        assert_eq!(round("[:T]"), "[:T]");
        assert_eq!(round("[ :T {p: [1]}]"), "[:T {p: [1]}]");
        assert_eq!(round("<()>"), "<()>");
        assert_eq!(round("<(:A)-[:T]->(:B)<-[:S {w: 2}]-()>"), "<(:A)-[:T]->(:B)<-[:S {w: 2}]-()>");
        assert_eq!(round("[<(:A)-[:T]->(:B)>]"), "[<(:A)-[:T]->(:B)>]");
        let path = parse("<(:A)<-[:T]-(:B)>").unwrap();
        let TckValue::Path(p) = path else { panic!() };
        assert!(!p.hops[0].forward);
        assert!(parse("<(:A)-[:T]-(:B)>").is_err());
    }

    #[test]
    fn canonical_equality() {
        assert_eq!(canon("(:B:A {x: 1})", false), canon("(:A:B {x: 1})", false));
        assert_eq!(canon("NaN", false), canon("NaN", false));
        assert_eq!(canon("-0.0", false), canon("0.0", false));
        assert_ne!(canon("1", false), canon("1.0", false));
        assert_ne!(canon("'1'", false), canon("1", false));
        assert_ne!(canon("[1, 2]", false), canon("[2, 1]", false));
        assert_eq!(canon("[[1, 2], 3]", true), canon("[3, [2, 1]]", true));
        assert_ne!(canon("[1, 1, 2]", true), canon("[1, 2, 2]", true));
        assert_ne!(canon("<(:A)-[:T]->(:B)>", false), canon("<(:A)<-[:T]-(:B)>", false));
        assert_eq!(canon("0.30000000000000004", false), TckValue::Float(0.1 + 0.2).canonical(false));
    }

    mod roundtrip {
        use super::super::*;
        use proptest::prelude::*;

        fn name() -> impl Strategy<Value = String> {
            prop_oneof!["[A-Za-z_][A-Za-z0-9_]{0,5}", "[ -~]{0,4}"]
        }

        fn props(inner: impl Strategy<Value = TckValue>) -> impl Strategy<Value = TckMap> {
            prop::collection::btree_map(name(), inner, 0..3)
        }

        fn node() -> impl Strategy<Value = TckNode> {
            (prop::collection::vec(name(), 0..3), props(scalar())).prop_map(|(labels, props)| TckNode { labels, props })
        }

        fn rel() -> impl Strategy<Value = TckRel> {
            (name(), props(scalar())).prop_map(|(rel_type, props)| TckRel { rel_type, props })
        }

        fn scalar() -> impl Strategy<Value = TckValue> {
            prop_oneof![
                Just(TckValue::Null),
                any::<bool>().prop_map(TckValue::Bool),
                any::<i64>().prop_map(TckValue::Int),
                any::<f64>().prop_map(TckValue::Float),
                Just(TckValue::Float(f64::NEG_INFINITY)),
                "\\PC{0,8}".prop_map(TckValue::String),
                "[\\\\'a]{0,6}".prop_map(TckValue::String),
            ]
        }

        fn value() -> impl Strategy<Value = TckValue> {
            let leaf = prop_oneof![
                scalar(),
                node().prop_map(TckValue::Node),
                rel().prop_map(TckValue::Rel),
                (node(), prop::collection::vec((rel(), any::<bool>(), node()), 0..3)).prop_map(|(start, hops)| {
                    let hops = hops.into_iter().map(|(rel, forward, node)| Hop { rel, forward, node }).collect();
                    TckValue::Path(TckPath { start, hops })
                }),
            ];
            leaf.prop_recursive(3, 24, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(TckValue::List),
                    prop::collection::btree_map(name(), inner, 0..4).prop_map(TckValue::Map),
                ]
            })
        }

        proptest! {
            #[test]
            fn print_then_parse_gives_the_same_value(v in value()) {
                let text = v.to_string();
                let back = parse(&text).map_err(TestCaseError::fail)?;
                prop_assert_eq!(back.canonical(false), v.canonical(false), "{}", text);
                prop_assert_eq!(back.to_string(), text);
            }
        }
    }
}
