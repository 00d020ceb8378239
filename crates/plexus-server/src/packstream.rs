//! PackStream, the binary value encoding Bolt messages are made of: an encoder that writes straight into a byte
//! buffer (results are encoded without an intermediate tree) and a decoder for incoming messages that refuses
//! anything malformed, truncated or nested too deep, without trusting any declared size.

use std::fmt;

/// A decoded PackStream value. Maps keep their wire order (they are small: message metadata and parameters).
#[derive(Clone, Debug, PartialEq)]
pub enum Ps {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Bytes(Vec<u8>),
    String(String),
    List(Vec<Ps>),
    Map(Vec<(String, Ps)>),
    Struct(u8, Vec<Ps>),
}

impl Ps {
    /// The entry `key` of a map, if this is a map that has it.
    pub fn get(&self, key: &str) -> Option<&Ps> {
        match self {
            Ps::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Ps::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Ps::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Ps::Null)
    }
}

/// Why a byte sequence is not a valid PackStream value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    Truncated,
    UnknownMarker(u8),
    TooDeep,
    InvalidUtf8,
    NonStringKey,
    TrailingBytes(usize),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "the value ends before its declared size"),
            DecodeError::UnknownMarker(m) => write!(f, "unknown PackStream marker 0x{m:02X}"),
            DecodeError::TooDeep => write!(f, "values nested more than {MAX_DEPTH} levels deep"),
            DecodeError::InvalidUtf8 => write!(f, "a string is not valid UTF-8"),
            DecodeError::NonStringKey => write!(f, "a map key is not a string"),
            DecodeError::TrailingBytes(n) => write!(f, "{n} unexpected bytes after the message"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Nesting beyond this is refused, so a hostile message cannot exhaust the stack. It is the depth of the values
/// Cypher builds and returns, plus the message's struct and its map of parameters (or a record's list of
/// fields): a value a query returned can be sent back as a parameter. Connection threads decode with a large
/// stack (`bolt::QUERY_STACK`), where a thousand levels take a few hundred kilobytes.
pub const MAX_DEPTH: usize = plexus::cypher::MAX_VALUE_NESTING + 2;

/// Decodes exactly one value filling all of `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Ps, DecodeError> {
    let mut d = Decoder { bytes, pos: 0 };
    let v = d.value(0)?;
    if d.pos != bytes.len() {
        return Err(DecodeError::TrailingBytes(bytes.len() - d.pos));
    }
    Ok(v)
}

struct Decoder<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.bytes.len() - self.pos < n {
            return Err(DecodeError::Truncated);
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn be<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        Ok(self.take(N)?.try_into().expect("length checked"))
    }

    /// A declared element count, checked against the bytes left (every element takes at least one byte) so a
    /// huge declared size fails at once instead of reserving memory.
    fn count(&mut self, n: usize) -> Result<usize, DecodeError> {
        if n > self.bytes.len() - self.pos {
            return Err(DecodeError::Truncated);
        }
        Ok(n)
    }

    fn string(&mut self, len: usize) -> Result<String, DecodeError> {
        let raw = self.take(len)?;
        std::str::from_utf8(raw).map(str::to_owned).map_err(|_| DecodeError::InvalidUtf8)
    }

    fn value(&mut self, depth: usize) -> Result<Ps, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let marker = self.u8()?;
        Ok(match marker {
            0x00..=0x7F => Ps::Int(marker as i64),
            0xF0..=0xFF => Ps::Int(marker as i8 as i64),
            0x80..=0x8F => Ps::String(self.string((marker & 0x0F) as usize)?),
            0x90..=0x9F => self.list((marker & 0x0F) as usize, depth)?,
            0xA0..=0xAF => self.map((marker & 0x0F) as usize, depth)?,
            0xB0..=0xBF => {
                let n = self.count((marker & 0x0F) as usize)?;
                let tag = self.u8()?;
                let mut fields = Vec::with_capacity(n);
                for _ in 0..n {
                    fields.push(self.value(depth + 1)?);
                }
                Ps::Struct(tag, fields)
            }
            0xC0 => Ps::Null,
            0xC1 => Ps::Float(f64::from_be_bytes(self.be()?)),
            0xC2 => Ps::Bool(false),
            0xC3 => Ps::Bool(true),
            0xC8 => Ps::Int(i8::from_be_bytes(self.be()?) as i64),
            0xC9 => Ps::Int(i16::from_be_bytes(self.be()?) as i64),
            0xCA => Ps::Int(i32::from_be_bytes(self.be()?) as i64),
            0xCB => Ps::Int(i64::from_be_bytes(self.be()?)),
            0xCC => {
                let n = self.u8()? as usize;
                Ps::Bytes(self.take(n)?.to_vec())
            }
            0xCD => {
                let n = u16::from_be_bytes(self.be()?) as usize;
                Ps::Bytes(self.take(n)?.to_vec())
            }
            0xCE => {
                let n = u32::from_be_bytes(self.be()?) as usize;
                Ps::Bytes(self.take(n)?.to_vec())
            }
            0xD0 => {
                let n = self.u8()? as usize;
                Ps::String(self.string(n)?)
            }
            0xD1 => {
                let n = u16::from_be_bytes(self.be()?) as usize;
                Ps::String(self.string(n)?)
            }
            0xD2 => {
                let n = u32::from_be_bytes(self.be()?) as usize;
                Ps::String(self.string(n)?)
            }
            0xD4 => {
                let n = self.u8()? as usize;
                self.list(n, depth)?
            }
            0xD5 => {
                let n = u16::from_be_bytes(self.be()?) as usize;
                self.list(n, depth)?
            }
            0xD6 => {
                let n = u32::from_be_bytes(self.be()?) as usize;
                self.list(n, depth)?
            }
            0xD8 => {
                let n = self.u8()? as usize;
                self.map(n, depth)?
            }
            0xD9 => {
                let n = u16::from_be_bytes(self.be()?) as usize;
                self.map(n, depth)?
            }
            0xDA => {
                let n = u32::from_be_bytes(self.be()?) as usize;
                self.map(n, depth)?
            }
            m => return Err(DecodeError::UnknownMarker(m)),
        })
    }

    fn list(&mut self, n: usize, depth: usize) -> Result<Ps, DecodeError> {
        let n = self.count(n)?;
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(self.value(depth + 1)?);
        }
        Ok(Ps::List(items))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Ps, DecodeError> {
        // Each entry takes at least two bytes.
        let n = self.count(n.saturating_mul(2))? / 2;
        let mut entries: Vec<(String, Ps)> = Vec::with_capacity(n);
        // A repeated key keeps its last value, as in the reference implementations. Past a few entries the keys
        // seen are found by hash: a scan per key would let one message of many keys (a HELLO, before any log-on)
        // hold a core for hours.
        let mut positions: Option<std::collections::HashMap<String, usize>> = None;
        for _ in 0..n {
            let key = match self.value(depth + 1)? {
                Ps::String(s) => s,
                _ => return Err(DecodeError::NonStringKey),
            };
            let value = self.value(depth + 1)?;
            if positions.is_none() && entries.len() >= SCANNED_KEYS {
                positions = Some(entries.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)).collect());
            }
            let existing = match &mut positions {
                Some(positions) => match positions.entry(key.clone()) {
                    std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(entries.len());
                        None
                    }
                },
                None => entries.iter().position(|(k, _)| *k == key),
            };
            match existing {
                Some(i) => entries[i].1 = value,
                None => entries.push((key, value)),
            }
        }
        Ok(Ps::Map(entries))
    }
}

/// Up to this many entries a map's keys are checked for repeats by a scan, past it by hash.
const SCANNED_KEYS: usize = 16;

/// Writes PackStream values into a growing buffer.
#[derive(Default)]
pub struct Encoder {
    pub buf: Vec<u8>,
}

impl Encoder {
    pub fn new() -> Encoder {
        Encoder::default()
    }

    pub fn null(&mut self) {
        self.buf.push(0xC0);
    }

    pub fn bool(&mut self, b: bool) {
        self.buf.push(if b { 0xC3 } else { 0xC2 });
    }

    pub fn int(&mut self, i: i64) {
        if (-16..=127).contains(&i) {
            self.buf.push(i as u8);
        } else if i8::try_from(i).is_ok() {
            self.buf.push(0xC8);
            self.buf.push(i as u8);
        } else if let Ok(v) = i16::try_from(i) {
            self.buf.push(0xC9);
            self.buf.extend_from_slice(&v.to_be_bytes());
        } else if let Ok(v) = i32::try_from(i) {
            self.buf.push(0xCA);
            self.buf.extend_from_slice(&v.to_be_bytes());
        } else {
            self.buf.push(0xCB);
            self.buf.extend_from_slice(&i.to_be_bytes());
        }
    }

    pub fn float(&mut self, f: f64) {
        self.buf.push(0xC1);
        self.buf.extend_from_slice(&f.to_be_bytes());
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.sized(b.len(), None, [0xCC, 0xCD, 0xCE]);
        self.buf.extend_from_slice(b);
    }

    pub fn string(&mut self, s: &str) {
        self.sized(s.len(), Some(0x80), [0xD0, 0xD1, 0xD2]);
        self.buf.extend_from_slice(s.as_bytes());
    }

    pub fn list_header(&mut self, n: usize) {
        self.sized(n, Some(0x90), [0xD4, 0xD5, 0xD6]);
    }

    pub fn map_header(&mut self, n: usize) {
        self.sized(n, Some(0xA0), [0xD8, 0xD9, 0xDA]);
    }

    /// A structure header; structures have at most 15 fields.
    pub fn struct_header(&mut self, fields: usize, tag: u8) {
        debug_assert!(fields < 16);
        self.buf.push(0xB0 | fields as u8);
        self.buf.push(tag);
    }

    fn sized(&mut self, n: usize, tiny: Option<u8>, markers: [u8; 3]) {
        match tiny {
            Some(base) if n < 16 => self.buf.push(base | n as u8),
            _ if n <= u8::MAX as usize => {
                self.buf.push(markers[0]);
                self.buf.push(n as u8);
            }
            _ if n <= u16::MAX as usize => {
                self.buf.push(markers[1]);
                self.buf.extend_from_slice(&(n as u16).to_be_bytes());
            }
            _ => {
                self.buf.push(markers[2]);
                self.buf.extend_from_slice(&(n as u32).to_be_bytes());
            }
        }
    }

    /// Encodes a decoded value back (metadata built as [`Ps`] trees, and tests).
    pub fn value(&mut self, v: &Ps) {
        match v {
            Ps::Null => self.null(),
            Ps::Bool(b) => self.bool(*b),
            Ps::Int(i) => self.int(*i),
            Ps::Float(f) => self.float(*f),
            Ps::Bytes(b) => self.bytes(b),
            Ps::String(s) => self.string(s),
            Ps::List(items) => {
                self.list_header(items.len());
                items.iter().for_each(|i| self.value(i));
            }
            Ps::Map(entries) => {
                self.map_header(entries.len());
                for (k, v) in entries {
                    self.string(k);
                    self.value(v);
                }
            }
            Ps::Struct(tag, fields) => {
                self.struct_header(fields.len(), *tag);
                fields.iter().for_each(|f| self.value(f));
            }
        }
    }
}

/// Shorthand for building metadata maps.
pub fn map<const N: usize>(entries: [(&str, Ps); N]) -> Ps {
    Ps::Map(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip(v: &Ps) -> Ps {
        let mut e = Encoder::new();
        e.value(v);
        decode(&e.buf).unwrap()
    }

    #[test]
    fn known_encodings() {
        let enc = |v: Ps| {
            let mut e = Encoder::new();
            e.value(&v);
            e.buf
        };
        assert_eq!(enc(Ps::Int(1)), [0x01]);
        assert_eq!(enc(Ps::Int(-16)), [0xF0]);
        assert_eq!(enc(Ps::Int(-17)), [0xC8, 0xEF]);
        assert_eq!(enc(Ps::Int(128)), [0xC9, 0x00, 0x80]);
        assert_eq!(enc(Ps::Int(i64::MIN))[0], 0xCB);
        assert_eq!(enc(Ps::String("a".into())), [0x81, b'a']);
        assert_eq!(enc(Ps::List(vec![])), [0x90]);
        assert_eq!(enc(map([("a", Ps::Int(1))])), [0xA1, 0x81, b'a', 0x01]);
        assert_eq!(enc(Ps::Float(1.1)), [0xC1, 0x3F, 0xF1, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9A]);
    }

    #[test]
    fn refuses_malformed_input() {
        assert_eq!(decode(&[0xD2, 0xFF, 0xFF, 0xFF, 0xFF]), Err(DecodeError::Truncated));
        assert_eq!(decode(&[0xD6, 0xFF, 0xFF, 0xFF, 0xFF]), Err(DecodeError::Truncated));
        assert_eq!(decode(&[0xDA, 0x7F, 0xFF, 0xFF, 0xFF]), Err(DecodeError::Truncated));
        assert_eq!(decode(&[0xC7]), Err(DecodeError::UnknownMarker(0xC7)));
        assert_eq!(decode(&[0x82, 0xFF, 0xFE]), Err(DecodeError::InvalidUtf8));
        assert_eq!(decode(&[0xA1, 0x01, 0x01]), Err(DecodeError::NonStringKey));
        assert_eq!(decode(&[0x01, 0x02]), Err(DecodeError::TrailingBytes(1)));
        let deep: Vec<u8> = std::iter::repeat_n(0x91, MAX_DEPTH + 1).chain([0x01]).collect();
        assert_eq!(decode(&deep), Err(DecodeError::TooDeep));
        let deepest: Vec<u8> = std::iter::repeat_n(0x91, MAX_DEPTH).chain([0x01]).collect();
        assert!(decode(&deepest).is_ok());
    }

    fn arb_ps() -> impl Strategy<Value = Ps> {
        let leaf = prop_oneof![
            Just(Ps::Null),
            any::<bool>().prop_map(Ps::Bool),
            any::<i64>().prop_map(Ps::Int),
            any::<f64>().prop_filter("NaN never equals itself", |f| !f.is_nan()).prop_map(Ps::Float),
            proptest::collection::vec(any::<u8>(), 0..300).prop_map(Ps::Bytes),
            ".{0,40}".prop_map(Ps::String),
        ];
        leaf.prop_recursive(4, 64, 20, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..20).prop_map(Ps::List),
                proptest::collection::btree_map("[a-z]{0,6}", inner.clone(), 0..20)
                    .prop_map(|m| Ps::Map(m.into_iter().collect())),
                (any::<u8>(), proptest::collection::vec(inner, 0..15)).prop_map(|(t, f)| Ps::Struct(t, f)),
            ]
        })
    }

    proptest! {
        #[test]
        fn encode_then_decode_is_identity(v in arb_ps()) {
            prop_assert_eq!(roundtrip(&v), v);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes);
        }

        /// A map with repeated keys decodes as a scan would: each key where it first appears, with its last value,
        /// whether the map is small (scanned) or large (hashed).
        #[test]
        fn repeated_keys_keep_their_first_place_and_last_value(
            keys in proptest::collection::vec(0u8..40, 0..80),
        ) {
            let mut e = Encoder::new();
            e.buf.push(0xD8);
            e.buf.push(keys.len() as u8);
            let mut expected: Vec<(String, Ps)> = Vec::new();
            for (i, k) in keys.iter().enumerate() {
                let key = format!("k{k}");
                e.value(&Ps::String(key.clone()));
                e.value(&Ps::Int(i as i64));
                match expected.iter_mut().find(|(x, _)| *x == key) {
                    Some(slot) => slot.1 = Ps::Int(i as i64),
                    None => expected.push((key, Ps::Int(i as i64))),
                }
            }
            prop_assert_eq!(decode(&e.buf).unwrap(), Ps::Map(expected));
        }
    }

    #[test]
    fn a_map_of_many_keys_decodes_in_linear_time() {
        // 200,000 distinct keys: a scan per key would take minutes; by hash it is milliseconds.
        let n = 200_000u32;
        let mut e = Encoder::new();
        e.buf.push(0xDA);
        e.buf.extend_from_slice(&n.to_be_bytes());
        for i in 0..n {
            e.value(&Ps::String(format!("k{i}")));
            e.value(&Ps::Int(i as i64));
        }
        let Ps::Map(entries) = decode(&e.buf).unwrap() else { panic!("a map") };
        assert_eq!(entries.len(), n as usize);
        assert_eq!(entries[123_456], ("k123456".to_string(), Ps::Int(123_456)));
    }
}
