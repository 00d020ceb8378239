//! Spatial points: a coordinate reference system and two or three coordinates.
//!
//! The four systems are the ones Neo4j's drivers know by SRID, so a point keeps its identity through Bolt,
//! the HTTP API and storage unchanged. A point is validated once, where it is made ([`Point::new`]): every
//! coordinate finite, a latitude within [-90, 90], a longitude outside [-180, 180] wrapped into it. So no
//! layer above has to recheck one it decoded.

use std::fmt;

/// A coordinate reference system. Ordered as Neo4j orders points of different systems: by SRID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Crs {
    /// Longitude and latitude in degrees (SRID 4326).
    Wgs84,
    /// Longitude, latitude in degrees and height in metres (SRID 4979).
    Wgs84_3d,
    /// x and y (SRID 7203).
    Cartesian,
    /// x, y and z (SRID 9157).
    Cartesian3d,
}

impl Crs {
    pub const ALL: [Crs; 4] = [Crs::Wgs84, Crs::Wgs84_3d, Crs::Cartesian, Crs::Cartesian3d];

    pub fn srid(self) -> i64 {
        match self {
            Crs::Wgs84 => 4326,
            Crs::Wgs84_3d => 4979,
            Crs::Cartesian => 7203,
            Crs::Cartesian3d => 9157,
        }
    }

    pub fn from_srid(srid: i64) -> Option<Crs> {
        Crs::ALL.into_iter().find(|c| c.srid() == srid)
    }

    /// The name Cypher shows (`point.crs`) and accepts (`{crs: 'WGS-84'}`, any case).
    pub fn name(self) -> &'static str {
        match self {
            Crs::Wgs84 => "wgs-84",
            Crs::Wgs84_3d => "wgs-84-3d",
            Crs::Cartesian => "cartesian",
            Crs::Cartesian3d => "cartesian-3d",
        }
    }

    pub fn from_name(name: &str) -> Option<Crs> {
        Crs::ALL.into_iter().find(|c| c.name().eq_ignore_ascii_case(name))
    }

    pub fn dimensions(self) -> usize {
        match self {
            Crs::Wgs84 | Crs::Cartesian => 2,
            Crs::Wgs84_3d | Crs::Cartesian3d => 3,
        }
    }

    pub fn is_geographic(self) -> bool {
        matches!(self, Crs::Wgs84 | Crs::Wgs84_3d)
    }

    /// The system of the same kind with `dimensions` coordinates.
    pub fn with_dimensions(self, dimensions: usize) -> Crs {
        match (self.is_geographic(), dimensions) {
            (true, 3) => Crs::Wgs84_3d,
            (true, _) => Crs::Wgs84,
            (false, 3) => Crs::Cartesian3d,
            (false, _) => Crs::Cartesian,
        }
    }
}

impl fmt::Display for Crs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A point; coordinates beyond the system's dimensions are zero.
#[derive(Clone, Copy, Debug)]
pub struct Point {
    crs: Crs,
    coords: [f64; 3],
}

impl Point {
    /// A point of `crs` at `coords` (as many as the system has dimensions), or why there is none.
    pub fn new(crs: Crs, coords: &[f64]) -> Result<Point, String> {
        let dims = crs.dimensions();
        if coords.len() != dims {
            let (has, other) = if dims == 2 { ("2D", "3D") } else { ("3D", "2D") };
            return Err(format!(
                "Cannot create point with {has} coordinate reference system and {} coordinates. Please consider \
                 using equivalent {other} coordinate reference system",
                coords.len()
            ));
        }
        if coords.iter().any(|c| !c.is_finite()) {
            return Err(format!("Cannot create a point with non-finite coordinate values: {}", list(coords)));
        }
        let mut all = [0.0; 3];
        all[..dims].copy_from_slice(coords);
        if crs.is_geographic() {
            if !(-90.0..=90.0).contains(&all[1]) {
                return Err(format!(
                    "Cannot create WGS84 point with invalid coordinate: {}. Valid range for Y coordinate is [-90, 90].",
                    list(coords)
                ));
            }
            all[0] = wrap_longitude(all[0]);
        }
        Ok(Point { crs, coords: all })
    }

    pub fn crs(&self) -> Crs {
        self.crs
    }

    /// The coordinates: x, y and, in three dimensions, z (longitude, latitude, height for WGS-84).
    pub fn coords(&self) -> &[f64] {
        &self.coords[..self.crs.dimensions()]
    }

    pub fn x(&self) -> f64 {
        self.coords[0]
    }

    pub fn y(&self) -> f64 {
        self.coords[1]
    }

    /// The third coordinate, in three dimensions.
    pub fn z(&self) -> Option<f64> {
        (self.crs.dimensions() == 3).then_some(self.coords[2])
    }
}

/// The coordinates a map of named numbers gives a point (`number` looks a key up), as Neo4j reads them: `x`,
/// `y`[, `z`], or else `longitude`, `latitude`[, `z` or `height`, z first], and whether they are the geographic
/// ones. `None` when the map names neither pair. Shared by Cypher's `point()` and the importer's point columns.
pub fn named_coordinates<E>(
    mut number: impl FnMut(&str) -> Result<Option<f64>, E>,
) -> Result<Option<(Vec<f64>, bool)>, E> {
    let with_third = |a: f64, b: f64, c: Option<f64>| match c {
        Some(c) => vec![a, b, c],
        None => vec![a, b],
    };
    if let (Some(x), Some(y)) = (number("x")?, number("y")?) {
        let z = number("z")?;
        return Ok(Some((with_third(x, y, z), false)));
    }
    if let (Some(lon), Some(lat)) = (number("longitude")?, number("latitude")?) {
        let (z, height) = (number("z")?, number("height")?);
        return Ok(Some((with_third(lon, lat, z.or(height)), true)));
    }
    Ok(None)
}

/// `point({x: 1.0, y: 2.0, crs: 'cartesian'})`, as Cypher writes a point (for messages).
impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("point({")?;
        for (c, name) in self.coords().iter().zip(["x", "y", "z"]) {
            write!(f, "{name}: {c:?}, ")?;
        }
        write!(f, "crs: '{}'}})", self.crs)
    }
}

/// The same system and bit-identical coordinates (so `-0.0` differs from `0.0`, as in Neo4j).
impl PartialEq for Point {
    fn eq(&self, other: &Self) -> bool {
        self.crs == other.crs && self.coords.iter().zip(&other.coords).all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

/// A longitude outside [-180, 180] brought into it by whole turns, as Neo4j does: by adding or subtracting 360
/// (so 540 is 180 and -540 is -180), which for the usual few turns gives Neo4j's digits exactly.
fn wrap_longitude(x: f64) -> f64 {
    if (-180.0..=180.0).contains(&x) {
        return x;
    }
    let turns = if x > 180.0 { -((x - 180.0) / 360.0).ceil() } else { ((-180.0 - x) / 360.0).ceil() };
    if turns.abs() <= 4.0 {
        let mut x = x;
        while x > 180.0 {
            x -= 360.0;
        }
        while x < -180.0 {
            x += 360.0;
        }
        return x;
    }
    // Far out, a turn is below a float's resolution: one step by the whole count.
    (x + turns * 360.0).clamp(-180.0, 180.0)
}

fn list(coords: &[f64]) -> String {
    let items: Vec<String> = coords.iter().map(|c| format!("{c:?}")).collect();
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systems_by_srid_and_name() {
        for crs in Crs::ALL {
            assert_eq!(Crs::from_srid(crs.srid()), Some(crs));
            assert_eq!(Crs::from_name(&crs.name().to_uppercase()), Some(crs));
        }
        assert_eq!(Crs::from_srid(1234), None);
        assert_eq!(Crs::Wgs84.with_dimensions(3), Crs::Wgs84_3d);
        assert_eq!(Crs::Cartesian3d.with_dimensions(2), Crs::Cartesian);
    }

    #[test]
    fn longitudes_wrap_and_latitudes_are_checked() {
        let lon = |x: f64| Point::new(Crs::Wgs84, &[x, 1.0]).unwrap().x();
        assert_eq!(lon(541.0), -179.0);
        assert_eq!(lon(-181.0), 179.0);
        assert_eq!(lon(180.0), 180.0);
        assert_eq!(lon(-540.0), -180.0);
        // Neo4j's answers: whole turns added or taken away.
        assert_eq!(lon(540.0), 180.0);
        assert_eq!(lon(900.0), 180.0);
        assert_eq!(lon(-180.0000001), 179.9999999);
        assert!((-180.0..=180.0).contains(&lon(1e300)));
        assert!(Point::new(Crs::Wgs84, &[1.0, 91.0]).unwrap_err().contains("[-90, 90]"));
        // Cartesian points have no range.
        assert_eq!(Point::new(Crs::Cartesian, &[541.0, 91.0]).unwrap().coords(), &[541.0, 91.0]);
    }

    #[test]
    fn dimensions_must_match_and_coordinates_be_finite() {
        assert!(Point::new(Crs::Cartesian3d, &[1.0, 2.0]).unwrap_err().contains("3D coordinate reference system"));
        assert!(Point::new(Crs::Cartesian, &[1.0, 2.0, 3.0]).is_err());
        assert!(Point::new(Crs::Cartesian, &[f64::NAN, 2.0]).unwrap_err().contains("non-finite"));
        let p = Point::new(Crs::Wgs84_3d, &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((p.z(), Point::new(Crs::Wgs84, &[1.0, 2.0]).unwrap().z()), (Some(3.0), None));
    }
}
