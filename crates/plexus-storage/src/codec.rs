//! Binary encoding shared by the write-ahead log and checkpoints: varints, strings and property values.
//!
//! Decoding never panics and never allocates more than the input could justify: every length is checked against
//! the bytes that remain, so a corrupt or hostile file yields a [`DecodeError`], not a crash or an OOM.

use std::sync::Arc;

use crate::value::{Crs, Date, DateTime, Duration, LocalDateTime, LocalTime, Point, Time, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub type DecodeResult<T> = Result<T, DecodeError>;

fn err<T>(msg: impl Into<String>) -> DecodeResult<T> {
    Err(DecodeError(msg.into()))
}

pub fn put_u8(buf: &mut Vec<u8>, v: u8) {
    buf.push(v);
}

pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

pub fn put_ivarint(buf: &mut Vec<u8>, v: i64) {
    put_varint(buf, ((v << 1) ^ (v >> 63)) as u64);
}

pub fn put_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    put_varint(buf, b.len() as u64);
    buf.extend_from_slice(b);
}

pub fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_bytes(buf, s.as_bytes());
}

const TAG_NULL: u8 = 0;
const TAG_FALSE: u8 = 1;
const TAG_TRUE: u8 = 2;
const TAG_INT: u8 = 3;
const TAG_FLOAT: u8 = 4;
const TAG_STRING: u8 = 5;
const TAG_BYTES: u8 = 6;
const TAG_DATE: u8 = 7;
const TAG_LOCAL_TIME: u8 = 8;
const TAG_TIME: u8 = 9;
const TAG_LOCAL_DATETIME: u8 = 10;
const TAG_DATETIME: u8 = 11;
const TAG_DATETIME_ZONE: u8 = 12;
const TAG_DURATION: u8 = 13;
const TAG_LIST: u8 = 14;
/// SRID, then each coordinate as 8 little-endian bytes.
const TAG_POINT: u8 = 15;

pub fn put_value(buf: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => buf.push(TAG_NULL),
        Value::Bool(false) => buf.push(TAG_FALSE),
        Value::Bool(true) => buf.push(TAG_TRUE),
        Value::Int(i) => {
            buf.push(TAG_INT);
            put_ivarint(buf, *i);
        }
        Value::Float(f) => {
            buf.push(TAG_FLOAT);
            buf.extend_from_slice(&f.to_le_bytes());
        }
        Value::String(s) => {
            buf.push(TAG_STRING);
            put_str(buf, s);
        }
        Value::Bytes(b) => {
            buf.push(TAG_BYTES);
            put_bytes(buf, b);
        }
        Value::Date(d) => {
            buf.push(TAG_DATE);
            put_ivarint(buf, d.days);
        }
        Value::LocalTime(t) => {
            buf.push(TAG_LOCAL_TIME);
            put_ivarint(buf, t.nanos);
        }
        Value::Time(t) => {
            buf.push(TAG_TIME);
            put_ivarint(buf, t.nanos);
            put_ivarint(buf, t.offset_seconds as i64);
        }
        Value::LocalDateTime(t) => {
            buf.push(TAG_LOCAL_DATETIME);
            put_ivarint(buf, t.seconds);
            put_varint(buf, t.nanos as u64);
        }
        Value::DateTime(t) => {
            buf.push(if t.zone.is_some() { TAG_DATETIME_ZONE } else { TAG_DATETIME });
            put_ivarint(buf, t.seconds);
            put_varint(buf, t.nanos as u64);
            put_ivarint(buf, t.offset_seconds as i64);
            if let Some(zone) = &t.zone {
                put_str(buf, zone);
            }
        }
        Value::Duration(d) => {
            buf.push(TAG_DURATION);
            put_ivarint(buf, d.months);
            put_ivarint(buf, d.days);
            put_ivarint(buf, d.seconds);
            put_ivarint(buf, d.nanos as i64);
        }
        Value::Point(p) => {
            buf.push(TAG_POINT);
            put_varint(buf, p.crs().srid() as u64);
            for c in p.coords() {
                buf.extend_from_slice(&c.to_le_bytes());
            }
        }
        Value::List(items) => {
            buf.push(TAG_LIST);
            put_varint(buf, items.len() as u64);
            for item in items.iter() {
                put_value(buf, item);
            }
        }
    }
}

/// A cursor over bytes being decoded.
#[derive(Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn u8(&mut self) -> DecodeResult<u8> {
        match self.buf.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => err("unexpected end of data"),
        }
    }

    pub fn take(&mut self, n: usize) -> DecodeResult<&'a [u8]> {
        if n > self.remaining() {
            return err(format!("length {n} exceeds the {} bytes left", self.remaining()));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn array<const N: usize>(&mut self) -> DecodeResult<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn u32_le(&mut self) -> DecodeResult<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub fn u64_le(&mut self) -> DecodeResult<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    #[inline]
    pub fn varint(&mut self) -> DecodeResult<u64> {
        // Most varints of an image (deltas, small ids, counts) are one byte.
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(b as u64);
            }
        }
        self.long_varint()
    }

    fn long_varint(&mut self) -> DecodeResult<u64> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                return err("varint overflows 64 bits");
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        err("varint longer than 10 bytes")
    }

    pub fn ivarint(&mut self) -> DecodeResult<i64> {
        let u = self.varint()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    pub fn i32v(&mut self) -> DecodeResult<i32> {
        i32::try_from(self.ivarint()?).map_err(|_| DecodeError("value out of 32-bit range".into()))
    }

    pub fn u32v(&mut self) -> DecodeResult<u32> {
        u32::try_from(self.varint()?).map_err(|_| DecodeError("value out of 32-bit range".into()))
    }

    /// A count of items each at least `min_item_bytes` long: refused if the input cannot hold that many.
    pub fn count(&mut self, min_item_bytes: usize) -> DecodeResult<usize> {
        let n = self.varint()?;
        if n > (self.remaining() / min_item_bytes.max(1)) as u64 {
            return err(format!("count {n} exceeds what the remaining {} bytes can hold", self.remaining()));
        }
        Ok(n as usize)
    }

    pub fn bytes(&mut self) -> DecodeResult<&'a [u8]> {
        let n = self.count(1)?;
        self.take(n)
    }

    pub fn str(&mut self) -> DecodeResult<&'a str> {
        let b = self.bytes()?;
        std::str::from_utf8(b).map_err(|_| DecodeError("string is not valid UTF-8".into()))
    }

    /// The next value when it is a float, consumed; otherwise `None`, with nothing consumed.
    #[inline]
    pub fn float_value(&mut self) -> DecodeResult<Option<f64>> {
        if self.buf.get(self.pos) != Some(&TAG_FLOAT) {
            return Ok(None);
        }
        self.pos += 1;
        Ok(Some(f64::from_le_bytes(self.array()?)))
    }

    pub fn value(&mut self) -> DecodeResult<Value> {
        self.value_at_depth(0)
    }

    fn value_at_depth(&mut self, depth: u32) -> DecodeResult<Value> {
        let tag = self.u8()?;
        Ok(match tag {
            TAG_NULL => Value::Null,
            TAG_FALSE => Value::Bool(false),
            TAG_TRUE => Value::Bool(true),
            TAG_INT => Value::Int(self.ivarint()?),
            TAG_FLOAT => Value::Float(f64::from_le_bytes(self.array()?)),
            TAG_STRING => Value::String(Arc::from(self.str()?)),
            TAG_BYTES => Value::Bytes(Arc::from(self.bytes()?)),
            TAG_DATE => Value::Date(Date { days: self.ivarint()? }),
            TAG_LOCAL_TIME => Value::LocalTime(LocalTime { nanos: self.ivarint()? }),
            TAG_TIME => Value::Time(Time { nanos: self.ivarint()?, offset_seconds: self.i32v()? }),
            TAG_LOCAL_DATETIME => Value::LocalDateTime(LocalDateTime { seconds: self.ivarint()?, nanos: self.u32v()? }),
            TAG_DATETIME | TAG_DATETIME_ZONE => {
                let seconds = self.ivarint()?;
                let nanos = self.u32v()?;
                let offset_seconds = self.i32v()?;
                let zone = if tag == TAG_DATETIME_ZONE { Some(Arc::from(self.str()?)) } else { None };
                Value::DateTime(Box::new(DateTime { seconds, nanos, offset_seconds, zone }))
            }
            TAG_DURATION => Value::from(Duration {
                months: self.ivarint()?,
                days: self.ivarint()?,
                seconds: self.ivarint()?,
                nanos: self.i32v()?,
            }),
            TAG_POINT => {
                let srid = self.varint()?;
                let Some(crs) = i64::try_from(srid).ok().and_then(Crs::from_srid) else {
                    return err(format!("unknown point coordinate reference system {srid}"));
                };
                let mut coords = [0.0; 3];
                for c in &mut coords[..crs.dimensions()] {
                    *c = f64::from_le_bytes(self.array()?);
                }
                match Point::new(crs, &coords[..crs.dimensions()]) {
                    Ok(p) => Value::from(p),
                    Err(e) => return err(format!("invalid stored point: {e}")),
                }
            }
            TAG_LIST => {
                if depth > 0 {
                    return err("nested list in a stored value");
                }
                let n = self.count(1)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.value_at_depth(depth + 1)?);
                }
                Value::List(Arc::from(items))
            }
            other => return err(format!("unknown value tag {other}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            any::<f64>().prop_map(Value::Float),
            ".{0,20}".prop_map(Value::from),
            proptest::collection::vec(any::<u8>(), 0..20).prop_map(Value::from),
            any::<i64>().prop_map(|d| Value::Date(Date { days: d })),
            any::<i64>().prop_map(|n| Value::LocalTime(LocalTime { nanos: n })),
            (any::<i64>(), any::<i32>()).prop_map(|(n, o)| Value::Time(Time { nanos: n, offset_seconds: o })),
            (any::<i64>(), any::<u32>())
                .prop_map(|(s, n)| Value::LocalDateTime(LocalDateTime { seconds: s, nanos: n })),
            (any::<i64>(), any::<u32>(), any::<i32>(), proptest::option::of("[A-Za-z/_]{1,20}")).prop_map(
                |(s, n, o, z)| Value::from(DateTime {
                    seconds: s,
                    nanos: n,
                    offset_seconds: o,
                    zone: z.map(Arc::from)
                })
            ),
            (any::<i64>(), any::<i64>(), any::<i64>(), any::<i32>())
                .prop_map(|(m, d, s, n)| { Value::from(Duration { months: m, days: d, seconds: s, nanos: n }) }),
            (0..4usize, -1e9f64..1e9, -90f64..90.0, -1e9f64..1e9).prop_map(|(c, x, y, z)| {
                let crs = Crs::ALL[c];
                Value::from(Point::new(crs, &[x, y, z][..crs.dimensions()]).unwrap())
            }),
        ]
    }

    fn arb_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            4 => arb_scalar(),
            1 => proptest::collection::vec(any::<i64>(), 0..8).prop_map(Value::from),
            1 => proptest::collection::vec(".{0,5}", 0..8).prop_map(Value::from),
        ]
    }

    proptest! {
        #[test]
        fn values_round_trip(v in arb_value()) {
            let mut buf = Vec::new();
            put_value(&mut buf, &v);
            let mut r = Reader::new(&buf);
            let back = r.value().unwrap();
            prop_assert!(r.is_empty());
            prop_assert_eq!(back, v);
        }

        #[test]
        fn varints_round_trip(u in any::<u64>(), i in any::<i64>()) {
            let mut buf = Vec::new();
            put_varint(&mut buf, u);
            put_ivarint(&mut buf, i);
            let mut r = Reader::new(&buf);
            prop_assert_eq!(r.varint().unwrap(), u);
            prop_assert_eq!(r.ivarint().unwrap(), i);
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut r = Reader::new(&bytes);
            while !r.is_empty() {
                if r.value().is_err() { break; }
            }
        }
    }
}
