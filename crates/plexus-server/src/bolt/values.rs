//! Query values on the Bolt wire: results encoded straight from [`ResultValue`] into PackStream (graph entities
//! and temporal values as Bolt structures, shaped by the negotiated version) and parameters decoded into engine
//! values.

use std::collections::BTreeMap;
use std::sync::Arc;

use plexus::cypher::temporal;
use plexus::cypher::value::{NodeData, PathData, RelData};
use plexus::cypher::{ResultValue, Value};
use plexus_storage::value::{Crs, Date, DateTime, Duration, LocalDateTime, LocalTime, Point, Time};

use crate::packstream::{Encoder, Ps};

/// How the negotiated protocol version shapes values.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Bolt 5: element ids on nodes and relationships.
    pub element_ids: bool,
    /// Date-times as UTC instants (Bolt 5, or 4.4 with the "utc" patch) rather than local wall-clock seconds.
    pub utc_datetimes: bool,
}

mod tag {
    pub const NODE: u8 = 0x4E;
    pub const RELATIONSHIP: u8 = 0x52;
    pub const UNBOUND_RELATIONSHIP: u8 = 0x72;
    pub const PATH: u8 = 0x50;
    pub const DATE: u8 = 0x44;
    pub const TIME: u8 = 0x54;
    pub const LOCAL_TIME: u8 = 0x74;
    pub const LOCAL_DATE_TIME: u8 = 0x64;
    pub const DATE_TIME: u8 = 0x49;
    pub const DATE_TIME_ZONE_ID: u8 = 0x69;
    pub const LEGACY_DATE_TIME: u8 = 0x46;
    pub const LEGACY_DATE_TIME_ZONE_ID: u8 = 0x66;
    pub const DURATION: u8 = 0x45;
    pub const POINT_2D: u8 = 0x58;
    pub const POINT_3D: u8 = 0x59;
}

pub fn node_element_id(id: u64) -> String {
    format!("n:{id}")
}

pub fn rel_element_id(id: u64) -> String {
    format!("r:{id}")
}

/// Encodes one result value.
pub fn encode(e: &mut Encoder, v: &ResultValue, shape: Shape) {
    match v {
        ResultValue::Null => e.null(),
        ResultValue::Bool(b) => e.bool(*b),
        ResultValue::Int(i) => e.int(*i),
        ResultValue::Float(f) => e.float(*f),
        ResultValue::String(s) => e.string(s),
        ResultValue::Bytes(b) => e.bytes(b),
        ResultValue::List(items) => {
            e.list_header(items.len());
            for item in items {
                encode(e, item, shape);
            }
        }
        ResultValue::Map(m) => properties(e, m, shape),
        ResultValue::Node(n) => node(e, n, shape),
        ResultValue::Rel(r) => relationship(e, r, shape),
        ResultValue::Path(p) => path(e, p, shape),
        ResultValue::Date(d) => {
            e.struct_header(1, tag::DATE);
            e.int(d.days);
        }
        ResultValue::LocalTime(t) => {
            e.struct_header(1, tag::LOCAL_TIME);
            e.int(t.nanos);
        }
        ResultValue::Time(t) => {
            e.struct_header(2, tag::TIME);
            e.int(t.nanos);
            e.int(t.offset_seconds as i64);
        }
        ResultValue::LocalDateTime(t) => {
            e.struct_header(2, tag::LOCAL_DATE_TIME);
            e.int(t.seconds);
            e.int(t.nanos as i64);
        }
        ResultValue::DateTime(t) => {
            let seconds = if shape.utc_datetimes { t.seconds } else { t.seconds + t.offset_seconds as i64 };
            match &t.zone {
                Some(zone) => {
                    let tag = if shape.utc_datetimes { tag::DATE_TIME_ZONE_ID } else { tag::LEGACY_DATE_TIME_ZONE_ID };
                    e.struct_header(3, tag);
                    e.int(seconds);
                    e.int(t.nanos as i64);
                    e.string(zone);
                }
                None => {
                    e.struct_header(3, if shape.utc_datetimes { tag::DATE_TIME } else { tag::LEGACY_DATE_TIME });
                    e.int(seconds);
                    e.int(t.nanos as i64);
                    e.int(t.offset_seconds as i64);
                }
            }
        }
        ResultValue::Duration(d) => {
            // Bolt's nanoseconds lie in 0..1e9, the sign carried by the seconds (PT-0.5S is -1 s + 0.5e9 ns), as
            // Neo4j sends them: drivers that take the fields as they come would show a negative fraction otherwise.
            let d = temporal::canonical_duration(d);
            e.struct_header(4, tag::DURATION);
            e.int(d.months);
            e.int(d.days);
            e.int(d.seconds);
            e.int(d.nanos as i64);
        }
        ResultValue::Point(p) => {
            let coords = p.coords();
            e.struct_header(coords.len() + 1, if coords.len() == 3 { tag::POINT_3D } else { tag::POINT_2D });
            e.int(p.crs().srid());
            for c in coords {
                e.float(*c);
            }
        }
    }
}

fn properties(e: &mut Encoder, m: &BTreeMap<Arc<str>, ResultValue>, shape: Shape) {
    e.map_header(m.len());
    for (k, v) in m {
        e.string(k);
        encode(e, v, shape);
    }
}

fn node(e: &mut Encoder, n: &NodeData, shape: Shape) {
    e.struct_header(if shape.element_ids { 4 } else { 3 }, tag::NODE);
    e.int(n.id as i64);
    e.list_header(n.labels.len());
    for l in &n.labels {
        e.string(l);
    }
    properties(e, &n.properties, shape);
    if shape.element_ids {
        e.string(&node_element_id(n.id));
    }
}

fn relationship(e: &mut Encoder, r: &RelData, shape: Shape) {
    e.struct_header(if shape.element_ids { 8 } else { 5 }, tag::RELATIONSHIP);
    e.int(r.id as i64);
    e.int(r.start as i64);
    e.int(r.end as i64);
    e.string(&r.rel_type);
    properties(e, &r.properties, shape);
    if shape.element_ids {
        e.string(&rel_element_id(r.id));
        e.string(&node_element_id(r.start));
        e.string(&node_element_id(r.end));
    }
}

/// A path as Bolt sends it: distinct nodes, distinct relationships without their ends, and a walk through them
/// (`[rel index, node index]*`, relationship indexes from 1, negative when walked against their direction).
fn path(e: &mut Encoder, p: &PathData, shape: Shape) {
    let mut nodes: Vec<&NodeData> = Vec::new();
    let mut rels: Vec<&RelData> = Vec::new();
    let mut walk = Vec::with_capacity(p.rels.len() * 2);
    if let Some(first) = p.nodes.first() {
        nodes.push(first);
    }
    for (i, r) in p.rels.iter().enumerate() {
        let from = &p.nodes[i];
        let to = &p.nodes[i + 1];
        let ri = match rels.iter().position(|x| x.id == r.id) {
            Some(k) => k,
            None => {
                rels.push(r);
                rels.len() - 1
            }
        } as i64
            + 1;
        walk.push(if r.start == from.id && r.end == to.id { ri } else { -ri });
        let ni = match nodes.iter().position(|m| m.id == to.id) {
            Some(k) => k,
            None => {
                nodes.push(to);
                nodes.len() - 1
            }
        };
        walk.push(ni as i64);
    }
    e.struct_header(3, tag::PATH);
    e.list_header(nodes.len());
    for n in &nodes {
        node(e, n, shape);
    }
    e.list_header(rels.len());
    for r in &rels {
        e.struct_header(if shape.element_ids { 4 } else { 3 }, tag::UNBOUND_RELATIONSHIP);
        e.int(r.id as i64);
        e.string(&r.rel_type);
        properties(e, &r.properties, shape);
        if shape.element_ids {
            e.string(&rel_element_id(r.id));
        }
    }
    e.list_header(walk.len());
    for w in walk {
        e.int(w);
    }
}

/// Decodes a parameter value. Graph entities cannot be parameters.
pub fn decode_param(v: &Ps, shape: Shape) -> Result<Value, String> {
    Ok(match v {
        Ps::Null => Value::Null,
        Ps::Bool(b) => Value::Bool(*b),
        Ps::Int(i) => Value::Int(*i),
        Ps::Float(f) => Value::Float(*f),
        Ps::Bytes(b) => Value::Bytes(b.as_slice().into()),
        Ps::String(s) => Value::string(s.as_str()),
        Ps::List(items) => Value::list(items.iter().map(|i| decode_param(i, shape)).collect::<Result<_, _>>()?),
        Ps::Map(entries) => {
            let mut m = BTreeMap::new();
            for (k, v) in entries {
                m.insert(Arc::from(k.as_str()), decode_param(v, shape)?);
            }
            Value::map(m)
        }
        Ps::Struct(t, fields) => decode_struct(*t, fields, shape)?,
    })
}

fn decode_struct(t: u8, f: &[Ps], shape: Shape) -> Result<Value, String> {
    let int = |i: usize| -> Result<i64, String> {
        f.get(i).and_then(Ps::as_int).ok_or_else(|| format!("structure 0x{t:02X}: field {i} must be an integer"))
    };
    let arity = |n: usize| -> Result<(), String> {
        if f.len() == n {
            Ok(())
        } else {
            Err(format!("structure 0x{t:02X} has {} fields, expected {n}", f.len()))
        }
    };
    let nanos_of = |i: usize| -> Result<u32, String> {
        u32::try_from(int(i)?).ok().filter(|n| *n < 1_000_000_000).ok_or_else(|| "nanoseconds out of range".to_string())
    };
    let offset_of = |i: usize| -> Result<i32, String> {
        i32::try_from(int(i)?).ok().filter(|o| o.abs() <= 18 * 3600).ok_or_else(|| "offset out of range".to_string())
    };
    // Bolt 5 sends UTC seconds (with the `utc` patch in 4.4); the legacy structures local ones.
    let local_seconds = t == tag::LEGACY_DATE_TIME || t == tag::LEGACY_DATE_TIME_ZONE_ID || !shape.utc_datetimes;
    // Values past the years Cypher covers (±999,999,999) are refused here: stored, every later use of them
    // would fail with a misleading error.
    let too_far = || "a temporal value out of range: years lie between -999999999 and 999999999".to_string();
    let with_offset = |given: i64, nanos: u32, offset: i32| {
        let seconds = if local_seconds { given.checked_sub(offset as i64) } else { Some(given) };
        let seconds = seconds.filter(|s| temporal::epoch_seconds_in_range(s.saturating_add(offset as i64)));
        let seconds = seconds.ok_or_else(too_far)?;
        Ok::<_, String>(Value::DateTime(Box::new(DateTime { seconds, nanos, offset_seconds: offset, zone: None })))
    };
    Ok(match t {
        tag::DATE => {
            arity(1)?;
            let days = int(0)?;
            if !temporal::epoch_days_in_range(days) {
                return Err(too_far());
            }
            Value::Date(Date { days })
        }
        tag::LOCAL_TIME => {
            arity(1)?;
            Value::LocalTime(LocalTime { nanos: day_nanos(int(0)?)? })
        }
        tag::TIME => {
            arity(2)?;
            Value::Time(Time { nanos: day_nanos(int(0)?)?, offset_seconds: offset_of(1)? })
        }
        tag::LOCAL_DATE_TIME => {
            arity(2)?;
            let seconds = int(0)?;
            if !temporal::epoch_seconds_in_range(seconds) {
                return Err(too_far());
            }
            Value::LocalDateTime(LocalDateTime { seconds, nanos: nanos_of(1)? })
        }
        tag::DATE_TIME | tag::LEGACY_DATE_TIME => {
            arity(3)?;
            with_offset(int(0)?, nanos_of(1)?, offset_of(2)?)?
        }
        tag::DATE_TIME_ZONE_ID | tag::LEGACY_DATE_TIME_ZONE_ID => {
            arity(3)?;
            let zone = f[2].as_str().ok_or("structure DateTimeZoneId: the zone must be a string")?;
            if let Some(offset) = temporal::zone_id_offset(zone) {
                // An offset sent as a zone id (Java's `GMT+02:00`, Go's `+02:00`) is the fixed offset it names.
                return with_offset(int(0)?, nanos_of(1)?, offset);
            }
            let nanos = nanos_of(1)?;
            // The zone's canonical name (`Europe/Stockholm` for `europe/stockholm`), and its rules at the nearest
            // end of the zone database for years beyond it, as for values made in queries.
            let (utc, offset, name) = temporal::zoned_from_client(zone, int(0)?, local_seconds)?;
            Value::DateTime(Box::new(DateTime { seconds: utc, nanos, offset_seconds: offset, zone: name }))
        }
        tag::DURATION => {
            arity(4)?;
            let nanos = i32::try_from(int(3)?).map_err(|_| "duration nanoseconds out of range".to_string())?;
            Value::duration(Duration { months: int(0)?, days: int(1)?, seconds: int(2)?, nanos })
        }
        tag::POINT_2D | tag::POINT_3D => {
            let dims = if t == tag::POINT_3D { 3 } else { 2 };
            arity(dims + 1)?;
            let srid = int(0)?;
            let crs = Crs::from_srid(srid).ok_or_else(|| format!("unknown coordinate reference system {srid}"))?;
            if crs.dimensions() != dims {
                return Err(format!("a {dims}D point cannot have the {}D system {crs}", crs.dimensions()));
            }
            let coords = f[1..]
                .iter()
                .map(|c| match c {
                    Ps::Float(x) => Ok(*x),
                    Ps::Int(i) => Ok(*i as f64),
                    _ => Err(format!("structure 0x{t:02X}: a coordinate must be a float")),
                })
                .collect::<Result<Vec<f64>, String>>()?;
            Value::from_point(Point::new(crs, &coords)?)
        }
        tag::NODE | tag::RELATIONSHIP | tag::UNBOUND_RELATIONSHIP | tag::PATH => {
            return Err("nodes, relationships and paths cannot be passed as parameters; pass their ids".into())
        }
        other => return Err(format!("unknown structure 0x{other:02X} in a parameter")),
    })
}

fn day_nanos(n: i64) -> Result<i64, String> {
    if (0..86_400_000_000_000).contains(&n) {
        Ok(n)
    } else {
        Err("time of day out of range".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packstream::decode;

    const V5: Shape = Shape { element_ids: true, utc_datetimes: true };
    const V44: Shape = Shape { element_ids: false, utc_datetimes: false };

    fn enc(v: &ResultValue, shape: Shape) -> Ps {
        let mut e = Encoder::new();
        encode(&mut e, v, shape);
        decode(&e.buf).unwrap()
    }

    fn node_data(id: u64) -> NodeData {
        NodeData { id, labels: vec!["P".into()], properties: BTreeMap::new() }
    }

    #[test]
    fn nodes_carry_element_ids_from_bolt_5() {
        let n = ResultValue::Node(Box::new(node_data(7)));
        match enc(&n, V5) {
            Ps::Struct(0x4E, f) => assert_eq!(f[3], Ps::String("n:7".into())),
            other => panic!("{other:?}"),
        }
        match enc(&n, V44) {
            Ps::Struct(0x4E, f) => assert_eq!(f.len(), 3),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn paths_walk_relationships_with_direction() {
        let r = |id, start, end| RelData { id, start, end, rel_type: "T".into(), properties: BTreeMap::new() };
        // 1 -> 2 <- 3
        let p =
            PathData { nodes: vec![node_data(1), node_data(2), node_data(3)], rels: vec![r(10, 1, 2), r(11, 3, 2)] };
        match enc(&ResultValue::Path(Box::new(p)), V5) {
            Ps::Struct(0x50, f) => {
                assert_eq!(f[2], Ps::List(vec![Ps::Int(1), Ps::Int(1), Ps::Int(-2), Ps::Int(2)]));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn datetimes_round_trip_in_both_encodings() {
        let dt = DateTime { seconds: 1_700_000_000, nanos: 5, offset_seconds: 3600, zone: None };
        for shape in [V5, V44] {
            let ps = enc(&ResultValue::DateTime(Box::new(dt.clone())), shape);
            match decode_param(&ps, shape).unwrap() {
                Value::DateTime(back) => assert_eq!(*back, dt),
                other => panic!("{other:?}"),
            }
        }
        let zoned =
            DateTime { seconds: 1_700_000_000, nanos: 0, offset_seconds: 3600, zone: Some("Europe/Berlin".into()) };
        for shape in [V5, V44] {
            let ps = enc(&ResultValue::DateTime(Box::new(zoned.clone())), shape);
            match decode_param(&ps, shape).unwrap() {
                Value::DateTime(back) => assert_eq!(*back, zoned),
                other => panic!("{other:?}"),
            }
        }
    }

    /// PT-59M-59.5S travels as -3600 s + 0.5e9 ns, as Neo4j sends it, and one sent with a negative fraction is
    /// the same duration (equal to the one a query makes).
    #[test]
    fn duration_nanoseconds_are_never_negative_on_the_wire() {
        let fields = |ps: Ps| match ps {
            Ps::Struct(0x45, f) => f,
            other => panic!("{other:?}"),
        };
        let negative_fraction = Duration { months: 1, days: -2, seconds: -3599, nanos: -500_000_000 };
        let sent = fields(enc(&ResultValue::Duration(negative_fraction), V5));
        assert_eq!(sent, vec![Ps::Int(1), Ps::Int(-2), Ps::Int(-3600), Ps::Int(500_000_000)]);
        let given = Ps::Struct(0x45, vec![Ps::Int(1), Ps::Int(-2), Ps::Int(-3599), Ps::Int(-500_000_000)]);
        let normal = Duration { months: 1, days: -2, seconds: -3600, nanos: 500_000_000 };
        match decode_param(&given, V5).unwrap() {
            Value::Duration(d) => assert_eq!(*d, normal),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn offsets_sent_as_zone_ids_are_fixed_offsets() {
        // Java's ZoneId.of("GMT+02:00"), Go's time.FixedZone("+02:00", 7200): the same instant at +02:00.
        let expected = DateTime { seconds: 1_700_000_000, nanos: 0, offset_seconds: 7200, zone: None };
        for id in ["GMT+02:00", "+02:00", "UTC+2"] {
            let ps =
                Ps::Struct(tag::DATE_TIME_ZONE_ID, vec![Ps::Int(1_700_000_000), Ps::Int(0), Ps::String(id.into())]);
            match decode_param(&ps, V5).unwrap() {
                Value::DateTime(back) => assert_eq!(*back, expected, "{id}"),
                other => panic!("{id}: {other:?}"),
            }
            // Bolt 4.4 sends local seconds.
            let local = 1_700_000_000 + 7200;
            let ps = Ps::Struct(tag::LEGACY_DATE_TIME_ZONE_ID, vec![Ps::Int(local), Ps::Int(0), Ps::String(id.into())]);
            match decode_param(&ps, V44).unwrap() {
                Value::DateTime(back) => assert_eq!(*back, expected, "{id}"),
                other => panic!("{id}: {other:?}"),
            }
        }
    }

    #[test]
    fn points_round_trip() {
        for (crs, coords) in [
            (Crs::Cartesian, &[1.5, -2.0][..]),
            (Crs::Cartesian3d, &[1.0, 2.0, 3.0][..]),
            (Crs::Wgs84, &[12.5, 56.0][..]),
            (Crs::Wgs84_3d, &[12.5, 56.0, 100.0][..]),
        ] {
            let p = Point::new(crs, coords).unwrap();
            let ps = enc(&ResultValue::Point(p), V5);
            let Ps::Struct(t, fields) = &ps else { panic!("{ps:?}") };
            assert_eq!((*t, fields.len()), (if coords.len() == 3 { 0x59 } else { 0x58 }, coords.len() + 1));
            assert_eq!(fields[0], Ps::Int(crs.srid()));
            assert_eq!(decode_param(&ps, V5).unwrap(), Value::from_point(p));
        }
    }

    #[test]
    fn bad_parameters_are_refused_with_a_reason() {
        // SRID 1 names no system; 9157 is three-dimensional; WGS-84 latitudes stop at 90.
        assert!(decode_param(&Ps::Struct(0x58, vec![Ps::Int(1), Ps::Float(1.0), Ps::Float(2.0)]), V5)
            .unwrap_err()
            .contains("coordinate reference system"));
        assert!(decode_param(&Ps::Struct(0x58, vec![Ps::Int(9157), Ps::Float(1.0), Ps::Float(2.0)]), V5).is_err());
        assert!(decode_param(&Ps::Struct(0x58, vec![Ps::Int(4326), Ps::Float(1.0), Ps::Float(95.0)]), V5).is_err());
        assert!(decode_param(&Ps::Struct(0x58, vec![Ps::Int(7203), Ps::Float(1.0)]), V5).is_err());
        assert!(decode_param(&Ps::Struct(0x44, vec![]), V5).is_err());
        assert!(decode_param(&Ps::Struct(0x74, vec![Ps::Int(-1)]), V5).is_err());
        assert!(decode_param(&Ps::Struct(0x69, vec![Ps::Int(0), Ps::Int(0), Ps::String("Nowhere/Land".into())]), V5)
            .is_err());
    }

    /// Temporal values past the years Cypher covers are refused; within them, zone ids work beyond the zone
    /// database's years (as values made in queries do) and are kept in their canonical spelling.
    #[test]
    fn temporal_parameters_are_checked_against_cypher_s_years() {
        let too_far = |p: Ps| decode_param(&p, V5).unwrap_err().contains("out of range");
        assert!(too_far(Ps::Struct(0x44, vec![Ps::Int(1 << 62)])));
        assert!(too_far(Ps::Struct(0x64, vec![Ps::Int(i64::MAX), Ps::Int(0)])));
        assert!(too_far(Ps::Struct(0x49, vec![Ps::Int(i64::MIN), Ps::Int(0), Ps::Int(3600)])));
        assert!(too_far(Ps::Struct(0x69, vec![Ps::Int(1 << 62), Ps::Int(0), Ps::String("Europe/Stockholm".into())])));
        // +10000-01-01T00:00 in Stockholm (UTC+1 then): 253402297200 - 3600 seconds.
        let utc = 253_402_300_800 - 3600;
        let zoned =
            decode_param(&Ps::Struct(0x69, vec![Ps::Int(utc), Ps::Int(0), Ps::String("europe/stockholm".into())]), V5);
        match zoned.unwrap() {
            Value::DateTime(d) => {
                assert_eq!((d.seconds, d.offset_seconds, d.zone.as_deref()), (utc, 3600, Some("Europe/Stockholm")))
            }
            other => panic!("{other:?}"),
        }
    }
}
