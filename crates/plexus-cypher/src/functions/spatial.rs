//! Spatial points in Cypher: `point({...})`, `point.distance`, `point.withinBBox`, a point's fields
//! (`p.x`, `p.latitude`, `p.crs`, ...) and its text form. The behaviour follows Neo4j 5, which is what users of
//! points expect: a map names its coordinates either as `x`, `y`[, `z`] or as `longitude`, `latitude`[,
//! `height`], with an optional `crs` name or `srid`; any `null` among them makes the point `null`.

use plexus_storage::value::{Crs, Point};

use super::{arg, invalid_type};
use crate::error::{CypherError, Result};
use crate::format::float_to_string;
use crate::value::{Map, Value};

/// The mean Earth radius Neo4j measures geographic distances with, in metres.
const EARTH_RADIUS_METRES: f64 = 6_378_140.0;

/// `point(map)`.
pub fn point(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::Map(m) => from_map(m),
        other => Err(invalid_type("point", "a map", other)),
    }
}

fn from_map(m: &Map) -> Result<Value> {
    const KEYS: [&str; 8] = ["x", "y", "z", "longitude", "latitude", "height", "crs", "srid"];
    if KEYS.iter().any(|k| matches!(m.get(*k), Some(Value::Null))) {
        return Ok(Value::Null);
    }
    let number = |key: &str| -> Result<Option<f64>> {
        match m.get(key) {
            None => Ok(None),
            Some(Value::Int(i)) => Ok(Some(*i as f64)),
            Some(Value::Float(f)) => Ok(Some(*f)),
            Some(other) => Err(invalid_point(format!(
                "the coordinate '{key}' of a point must be a number, not {}",
                other.type_name()
            ))),
        }
    };
    let Some((coords, geographic_keys)) = plexus_storage::point::named_coordinates(number)? else {
        let keys: Vec<String> = m.keys().map(|k| format!("'{k}'")).collect();
        return Err(invalid_point(format!(
            "A map with keys {} is not describing a valid point, a point is described either by using cartesian \
             coordinates e.g. {{x: 2.3, y: 4.5, crs: 'cartesian'}} or using geographic coordinates e.g. \
             {{latitude: 12.78, longitude: 56.7, crs: 'WGS-84'}}.",
            keys.join(", ")
        )));
    };
    let named = match (m.get("crs"), m.get("srid")) {
        (Some(_), Some(_)) => return Err(invalid_point("Cannot specify both CRS and SRID")),
        (Some(Value::String(name)), None) => Some(
            Crs::from_name(name)
                .ok_or_else(|| invalid_point(format!("Unknown coordinate reference system: {name}")))?,
        ),
        (Some(other), None) => {
            return Err(invalid_point(format!("the crs of a point must be a string, not {}", other.type_name())))
        }
        (None, Some(Value::Int(srid))) => Some(
            Crs::from_srid(*srid)
                .ok_or_else(|| invalid_point(format!("Unknown coordinate reference system: code={srid}")))?,
        ),
        (None, Some(other)) => {
            return Err(invalid_point(format!("the srid of a point must be an integer, not {}", other.type_name())))
        }
        (None, None) => None,
    };
    let crs = match named {
        Some(crs) => {
            if geographic_keys && !crs.is_geographic() {
                return Err(invalid_point(format!(
                    "Geographic points does not support coordinate reference system: {crs}"
                )));
            }
            crs
        }
        None if geographic_keys => Crs::Wgs84.with_dimensions(coords.len()),
        None => Crs::Cartesian.with_dimensions(coords.len()),
    };
    Point::new(crs, &coords).map(Value::from_point).map_err(invalid_point)
}

fn invalid_point(message: impl Into<String>) -> CypherError {
    CypherError::argument("InvalidArgumentValue", message.into())
}

/// `point.distance(a, b)`: metres along the Earth's surface for geographic points (with the height difference
/// for 3D ones), straight-line distance for cartesian ones; `null` for points of different systems or anything
/// that is not a point.
pub fn distance(args: &[Value]) -> Result<Value> {
    let (Value::Point(a), Value::Point(b)) = (arg(args, 0), arg(args, 1)) else { return Ok(Value::Null) };
    if a.crs() != b.crs() {
        return Ok(Value::Null);
    }
    if !a.crs().is_geographic() {
        let squares: f64 = a.coords().iter().zip(b.coords()).map(|(p, q)| (p - q) * (p - q)).sum();
        return Ok(Value::Float(squares.sqrt()));
    }
    // Haversine, as Neo4j computes it (same operations in the same order, so the same digits).
    let (lat1, lat2) = (a.y().to_radians(), b.y().to_radians());
    let (dlat, dlon) = (lat2 - lat1, b.x().to_radians() - a.x().to_radians());
    let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    let angle = 2.0 * h.sqrt().asin();
    Ok(Value::Float(match (a.z(), b.z()) {
        (Some(h1), Some(h2)) => {
            let along = (EARTH_RADIUS_METRES + (h1 + h2) / 2.0) * angle;
            let up = h1 - h2;
            (along * along + up * up).sqrt()
        }
        _ => EARTH_RADIUS_METRES * angle,
    }))
}

/// `point.withinBBox(p, lowerLeft, upperRight)`: whether `p` lies in the box; `null` unless all three are points
/// of one system. A geographic box whose lower-left longitude is east of its upper-right one crosses the
/// 180th meridian.
pub fn within_bbox(args: &[Value]) -> Result<Value> {
    let (Value::Point(p), Value::Point(lo), Value::Point(hi)) = (arg(args, 0), arg(args, 1), arg(args, 2)) else {
        return Ok(Value::Null);
    };
    if p.crs() != lo.crs() || p.crs() != hi.crs() {
        return Ok(Value::Null);
    }
    let inside = p.coords().iter().zip(lo.coords().iter().zip(hi.coords())).enumerate().all(|(i, (&c, (&l, &h)))| {
        if i == 0 && p.crs().is_geographic() && l > h {
            c >= l || c <= h
        } else {
            l <= c && c <= h
        }
    });
    Ok(Value::Bool(inside))
}

/// `p.key`: a coordinate under either of its names, `crs` or `srid`.
pub fn field(p: &Point, key: &str) -> Result<Value> {
    let crs = p.crs();
    let coordinate = |value: Option<f64>, kind_ok: bool| -> Result<Value> {
        match value {
            Some(v) if kind_ok => Ok(Value::Float(v)),
            _ => Err(CypherError::argument(
                "InvalidArgumentValue",
                format!(
                    "Field: {key} is not available on {}point: {}",
                    if kind_ok { "" } else { "cartesian " },
                    to_string(p)
                ),
            )),
        }
    };
    // Field names in any case, without allocating for the lower-cased key.
    const FIELDS: [&str; 8] = ["x", "y", "z", "longitude", "latitude", "height", "crs", "srid"];
    match FIELDS.into_iter().find(|f| f.eq_ignore_ascii_case(key)).unwrap_or("") {
        "x" => Ok(Value::Float(p.x())),
        "y" => Ok(Value::Float(p.y())),
        "z" => coordinate(p.z(), true),
        "longitude" => coordinate(Some(p.x()), crs.is_geographic()),
        "latitude" => coordinate(Some(p.y()), crs.is_geographic()),
        "height" => coordinate(p.z(), crs.is_geographic()),
        "crs" => Ok(Value::string(crs.name())),
        "srid" => Ok(Value::Int(crs.srid())),
        _ => Err(CypherError::argument("InvalidArgumentValue", format!("No such field: {key}"))),
    }
}

/// `point({x: 1.0, y: 2.0, crs: 'cartesian'})`, Neo4j's text form (geographic points too show `x` and `y`).
pub fn to_string(p: &Point) -> String {
    let names = ["x", "y", "z"];
    let coords: Vec<String> =
        p.coords().iter().zip(names).map(|(c, name)| format!("{name}: {}", float_to_string(*c))).collect();
    format!("point({{{}, crs: '{}'}})", coords.join(", "), p.crs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn map(entries: &[(&str, Value)]) -> Value {
        Value::map(entries.iter().map(|(k, v)| (Arc::from(*k), v.clone())).collect())
    }

    fn pt(entries: &[(&str, Value)]) -> Result<Value> {
        point(&[map(entries)])
    }

    fn text(v: &Value) -> String {
        match v {
            Value::Point(p) => to_string(p),
            other => panic!("not a point: {other:?}"),
        }
    }

    #[test]
    fn maps_name_their_system() {
        let (i, f) = (Value::Int, Value::Float);
        assert_eq!(text(&pt(&[("x", i(1)), ("y", i(2))]).unwrap()), "point({x: 1.0, y: 2.0, crs: 'cartesian'})");
        assert_eq!(
            text(&pt(&[("x", f(1.5)), ("y", i(-2)), ("z", i(3))]).unwrap()),
            "point({x: 1.5, y: -2.0, z: 3.0, crs: 'cartesian-3d'})"
        );
        assert_eq!(
            text(&pt(&[("longitude", i(1)), ("latitude", i(2)), ("height", i(3))]).unwrap()),
            "point({x: 1.0, y: 2.0, z: 3.0, crs: 'wgs-84-3d'})"
        );
        let s = Value::string;
        assert!(text(&pt(&[("x", i(1)), ("y", i(2)), ("crs", s("WGS-84"))]).unwrap()).contains("wgs-84"));
        assert!(text(&pt(&[("x", i(1)), ("y", i(2)), ("srid", i(4326))]).unwrap()).contains("wgs-84"));
        // x and y win over longitude and latitude; height means nothing to a cartesian point.
        assert_eq!(
            text(&pt(&[("x", i(1)), ("y", i(2)), ("latitude", i(4)), ("longitude", i(3)), ("height", i(5))]).unwrap()),
            "point({x: 1.0, y: 2.0, crs: 'cartesian'})"
        );
        assert_eq!(
            text(&pt(&[("x", f(1e20)), ("y", f(0.1))]).unwrap()),
            "point({x: 1.0E20, y: 0.1, crs: 'cartesian'})"
        );
    }

    #[test]
    fn nulls_make_null_and_bad_maps_are_errors() {
        let i = Value::Int;
        assert_eq!(pt(&[("x", Value::Null), ("y", i(2))]).unwrap(), Value::Null);
        assert_eq!(pt(&[("x", i(1)), ("y", i(2)), ("crs", Value::Null)]).unwrap(), Value::Null);
        assert_eq!(point(&[Value::Null]).unwrap(), Value::Null);
        for bad in [
            vec![("y", i(2))],
            vec![("x", Value::string("a")), ("y", i(2))],
            vec![("x", i(1)), ("y", i(2)), ("crs", Value::string("foo"))],
            vec![("x", i(1)), ("y", i(2)), ("srid", i(1234))],
            vec![("x", i(1)), ("y", i(2)), ("srid", i(4326)), ("crs", Value::string("cartesian"))],
            vec![("x", i(1)), ("y", i(2)), ("crs", Value::string("cartesian-3d"))],
            vec![("longitude", i(1)), ("latitude", i(91))],
            vec![("longitude", i(1)), ("latitude", i(2)), ("crs", Value::string("cartesian"))],
            vec![("x", Value::Float(f64::NAN)), ("y", i(2))],
        ] {
            assert!(pt(&bad).is_err(), "{bad:?}");
        }
        assert!(point(&[Value::Int(1)]).is_err());
    }

    #[test]
    fn distances_match_neo4j() {
        let i = Value::Int;
        let f = Value::Float;
        let d = |a: Value, b: Value| distance(&[a, b]).unwrap();
        assert_eq!(d(pt(&[("x", i(0)), ("y", i(0))]).unwrap(), pt(&[("x", i(3)), ("y", i(4))]).unwrap()), f(5.0));
        let geo = |lon: f64, lat: f64, h: Option<f64>| {
            let mut e = vec![("longitude", f(lon)), ("latitude", f(lat))];
            e.extend(h.map(|h| ("height", f(h))));
            pt(&e).unwrap()
        };
        // Neo4j 5.26 answers these exactly so.
        assert_eq!(d(geo(12.78, 56.7, None), geo(13.0, 56.0, None)), f(79096.40327673058));
        assert_eq!(d(geo(12.78, 56.7, Some(100.0)), geo(13.0, 56.0, Some(1000.0))), f(79108.34364743296));
        assert_eq!(d(geo(0.0, 0.0, None), pt(&[("x", i(0)), ("y", i(0))]).unwrap()), Value::Null);
        assert_eq!(d(Value::Null, geo(0.0, 0.0, None)), Value::Null);
    }

    #[test]
    fn boxes_and_fields() {
        let f = Value::Float;
        let c = |x: f64, y: f64| pt(&[("x", f(x)), ("y", f(y))]).unwrap();
        let g = |x: f64, y: f64| pt(&[("longitude", f(x)), ("latitude", f(y))]).unwrap();
        let within = |p, lo, hi| within_bbox(&[p, lo, hi]).unwrap();
        assert_eq!(within(c(1.0, 1.0), c(0.0, 0.0), c(2.0, 2.0)), Value::Bool(true));
        assert_eq!(within(c(1.0, 1.0), c(2.0, 2.0), c(0.0, 0.0)), Value::Bool(false));
        assert_eq!(within(g(179.0, 1.0), g(170.0, 0.0), g(-170.0, 2.0)), Value::Bool(true));
        assert_eq!(within(c(1.0, 1.0), g(0.0, 0.0), c(2.0, 2.0)), Value::Null);
        let Value::Point(p) = g(1.0, 2.0) else { unreachable!() };
        assert_eq!(field(&p, "latitude").unwrap(), f(2.0));
        assert_eq!(field(&p, "srid").unwrap(), Value::Int(4326));
        assert!(field(&p, "height").unwrap_err().to_string().contains("not available on point"));
        let Value::Point(q) = c(1.0, 2.0) else { unreachable!() };
        assert!(field(&q, "latitude").unwrap_err().to_string().contains("not available on cartesian point"));
        assert!(field(&q, "foo").unwrap_err().to_string().contains("No such field"));
    }
}
