//! Values and request bodies on the HTTP wire, as pure functions (no socket, no database) so they can be unit
//! tested and fuzzed: query results to JSON in the two formats of the Neo4j Query API, JSON parameters and
//! properties to engine values, and the request bodies of the Query API and the REST resources.
//!
//! Plain JSON (`application/json`) maps values to their natural JSON form: integers and finite floats as numbers,
//! bytes as base64 strings, temporal values as their ISO 8601 strings, nodes as `{elementId, labels, properties}`,
//! relationships as `{elementId, startNodeElementId, endNodeElementId, type, properties}`, paths as the list of
//! their alternating nodes and relationships. Typed JSON (`application/vnd.neo4j.query`) wraps every value as
//! `{"$type": T, "_value": V}` so nothing is lost: integers and floats travel as strings, temporal values keep their
//! kind, bytes are `Base64`.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use plexus::cypher::temporal::{self, Clock};
use plexus::cypher::value::{NodeData, PathData, RelData};
use plexus::cypher::{ResultValue, Value};
use plexus::value::{Crs, Point};
use plexus::{Params, QueryStats};
use serde_json::{json, Map as JsonMap, Value as Json};

use crate::bolt::values::{node_element_id, rel_element_id};
use crate::service::{AccessMode, ServerError};

/// The media type of typed JSON.
pub const TYPED_MEDIA_TYPE: &str = "application/vnd.neo4j.query";

/// Which JSON dialect a body is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Plain,
    Typed,
}

impl Format {
    /// The format a header (`Accept` or `Content-Type`) asks for: typed when it names the typed media type.
    pub fn from_header(value: Option<&str>) -> Format {
        match value {
            Some(v) if v.to_ascii_lowercase().contains(TYPED_MEDIA_TYPE) => Format::Typed,
            _ => Format::Plain,
        }
    }

    pub fn media_type(self) -> &'static str {
        match self {
            Format::Plain => "application/json",
            Format::Typed => TYPED_MEDIA_TYPE,
        }
    }
}

fn invalid_format(message: impl Into<String>) -> ServerError {
    ServerError::new("Neo.ClientError.Request.InvalidFormat", message)
}

fn invalid(message: impl Into<String>) -> ServerError {
    ServerError::request(message)
}

// ---------------------------------------------------------------------------------------------------------------
// Results to JSON
// ---------------------------------------------------------------------------------------------------------------

/// Encodes one result value.
pub fn encode(v: &ResultValue, format: Format) -> Json {
    match format {
        Format::Plain => encode_plain(v),
        Format::Typed => encode_typed(v),
    }
}

fn typed(type_name: &str, value: Json) -> Json {
    let mut m = JsonMap::with_capacity(2);
    m.insert("$type".into(), Json::String(type_name.into()));
    m.insert("_value".into(), value);
    Json::Object(m)
}

fn base64_of(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The ISO 8601 form of a temporal value (`None` for anything else), as Cypher's `toString` writes it.
fn temporal_string(v: &ResultValue) -> Option<String> {
    let value = match v {
        ResultValue::Date(d) => Value::Date(*d),
        ResultValue::LocalTime(t) => Value::LocalTime(*t),
        ResultValue::Time(t) => Value::Time(*t),
        ResultValue::LocalDateTime(t) => Value::LocalDateTime(*t),
        ResultValue::DateTime(t) => Value::DateTime(t.clone()),
        ResultValue::Duration(d) => Value::duration(*d),
        _ => return None,
    };
    temporal::to_string(&value)
}

fn non_finite_name(f: f64) -> &'static str {
    if f.is_nan() {
        "NaN"
    } else if f > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

fn encode_plain(v: &ResultValue) -> Json {
    match v {
        ResultValue::Null => Json::Null,
        ResultValue::Bool(b) => Json::Bool(*b),
        ResultValue::Int(i) => Json::from(*i),
        // JSON has no NaN or infinities: their names keep them readable rather than turning them into null.
        ResultValue::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or_else(|| Json::String(non_finite_name(*f).into())),
        ResultValue::String(s) => Json::String(s.to_string()),
        ResultValue::Bytes(b) => Json::String(base64_of(b)),
        ResultValue::List(items) => Json::Array(items.iter().map(encode_plain).collect()),
        ResultValue::Map(m) => Json::Object(m.iter().map(|(k, v)| (k.to_string(), encode_plain(v))).collect()),
        ResultValue::Node(n) => plain_node(n),
        ResultValue::Rel(r) => plain_rel(r),
        ResultValue::Path(p) => Json::Array(path_walk(p, plain_node, plain_rel)),
        ResultValue::Point(p) => Json::String(point_text(p)),
        other => Json::String(temporal_string(other).unwrap_or_default()),
    }
}

fn plain_properties(p: &BTreeMap<Arc<str>, ResultValue>) -> Json {
    Json::Object(p.iter().map(|(k, v)| (k.to_string(), encode_plain(v))).collect())
}

fn plain_node(n: &NodeData) -> Json {
    json!({
        "elementId": node_element_id(n.id),
        "labels": n.labels.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
        "properties": plain_properties(&n.properties),
    })
}

fn plain_rel(r: &RelData) -> Json {
    json!({
        "elementId": rel_element_id(r.id),
        "startNodeElementId": node_element_id(r.start),
        "endNodeElementId": node_element_id(r.end),
        "type": r.rel_type.to_string(),
        "properties": plain_properties(&r.properties),
    })
}

/// A path as the list `[node, rel, node, ...]` from its start to its end.
fn path_walk(p: &PathData, node: impl Fn(&NodeData) -> Json, rel: impl Fn(&RelData) -> Json) -> Vec<Json> {
    let mut out = Vec::with_capacity(p.nodes.len() + p.rels.len());
    for (i, n) in p.nodes.iter().enumerate() {
        if i > 0 {
            if let Some(r) = p.rels.get(i - 1) {
                out.push(rel(r));
            }
        }
        out.push(node(n));
    }
    out
}

fn encode_typed(v: &ResultValue) -> Json {
    match v {
        ResultValue::Null => typed("Null", Json::Null),
        ResultValue::Bool(b) => typed("Boolean", Json::Bool(*b)),
        ResultValue::Int(i) => typed("Integer", Json::String(i.to_string())),
        ResultValue::Float(f) => typed("Float", Json::String(float_string(*f))),
        ResultValue::String(s) => typed("String", Json::String(s.to_string())),
        ResultValue::Bytes(b) => typed("Base64", Json::String(base64_of(b))),
        ResultValue::List(items) => typed("List", Json::Array(items.iter().map(encode_typed).collect())),
        ResultValue::Map(m) => typed("Map", typed_properties(m)),
        ResultValue::Node(n) => typed_node(n),
        ResultValue::Rel(r) => typed_rel(r),
        ResultValue::Path(p) => typed("Path", Json::Array(path_walk(p, typed_node, typed_rel))),
        ResultValue::Date(_) => typed("Date", Json::String(temporal_string(v).unwrap_or_default())),
        ResultValue::LocalTime(_) => typed("LocalTime", Json::String(temporal_string(v).unwrap_or_default())),
        ResultValue::Time(_) => typed("Time", Json::String(temporal_string(v).unwrap_or_default())),
        ResultValue::LocalDateTime(_) => typed("LocalDateTime", Json::String(temporal_string(v).unwrap_or_default())),
        ResultValue::DateTime(dt) => {
            let kind = if dt.zone.is_some() { "ZonedDateTime" } else { "OffsetDateTime" };
            typed(kind, Json::String(temporal_string(v).unwrap_or_default()))
        }
        ResultValue::Duration(_) => typed("Duration", Json::String(temporal_string(v).unwrap_or_default())),
        ResultValue::Point(p) => typed("Point", Json::String(point_text(p))),
    }
}

/// A point as the Query API writes it: `SRID=7203;POINT (1.0 2.0)`, `SRID=4979;POINT Z (1.0 2.0 3.0)`.
fn point_text(p: &Point) -> String {
    let coords: Vec<String> = p.coords().iter().map(|c| float_string(*c)).collect();
    let kind = if coords.len() == 3 { "POINT Z" } else { "POINT" };
    format!("SRID={};{kind} ({})", p.crs().srid(), coords.join(" "))
}

/// The inverse of [`point_text`] (spaces around the parts optional, `POINT Z` or `POINT` for three coordinates).
fn parse_point_text(s: &str) -> Result<Point, String> {
    let bad = || format!("bad Point '{s}': expected e.g. SRID=7203;POINT (1.0 2.0)");
    let (srid, rest) = s.trim().strip_prefix("SRID=").and_then(|r| r.split_once(';')).ok_or_else(bad)?;
    let srid: i64 = srid.trim().parse().map_err(|_| bad())?;
    let rest = rest.trim().strip_prefix("POINT").ok_or_else(bad)?.trim_start();
    let rest = rest.strip_prefix('Z').unwrap_or(rest).trim();
    let inner = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')).ok_or_else(bad)?;
    let coords = inner.split_whitespace().map(parse_float).collect::<Option<Vec<f64>>>().ok_or_else(bad)?;
    let crs = Crs::from_srid(srid).ok_or_else(|| format!("bad Point '{s}': unknown coordinate reference system"))?;
    Point::new(crs, &coords).map_err(|e| format!("bad Point '{s}': {e}"))
}

/// A float as typed JSON writes it: always with a fraction or exponent, and the non-finite ones by name.
fn float_string(f: f64) -> String {
    if f.is_finite() {
        format!("{f:?}")
    } else {
        non_finite_name(f).into()
    }
}

fn typed_properties(p: &BTreeMap<Arc<str>, ResultValue>) -> Json {
    Json::Object(p.iter().map(|(k, v)| (k.to_string(), encode_typed(v))).collect())
}

fn typed_node(n: &NodeData) -> Json {
    typed(
        "Node",
        json!({
            "_element_id": node_element_id(n.id),
            "_labels": n.labels.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
            "_properties": typed_properties(&n.properties),
        }),
    )
}

fn typed_rel(r: &RelData) -> Json {
    typed(
        "Relationship",
        json!({
            "_element_id": rel_element_id(r.id),
            "_start_node_element_id": node_element_id(r.start),
            "_end_node_element_id": node_element_id(r.end),
            "_type": r.rel_type.to_string(),
            "_properties": typed_properties(&r.properties),
        }),
    )
}

/// The Query API's `counters` object (every key the Neo4j drivers know, so none is surprised).
pub fn counters(stats: &QueryStats) -> Json {
    let members = counter_members(stats).into_iter().map(|(name, value)| {
        let value = match value {
            Counter::Flag(flag) => Json::Bool(flag),
            Counter::Count(count) => Json::from(count),
        };
        (name.to_string(), value)
    });
    Json::Object(members.collect())
}

/// Writes [`counters`] as JSON text, the same bytes without building the object: every answer carries them.
pub fn write_counters(out: &mut Vec<u8>, stats: &QueryStats) {
    // A read's counters are all zero: their text is written once and copied from then on.
    static NO_CHANGES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    if *stats == QueryStats::default() {
        out.extend_from_slice(NO_CHANGES.get_or_init(|| {
            let mut text = Vec::new();
            write_counter_members(&mut text, stats);
            text
        }));
        return;
    }
    write_counter_members(out, stats);
}

/// [`write_counters`] piece by piece rather than formatted: the formatting machinery cost more than the rest of a
/// point read's answer.
fn write_counter_members(out: &mut Vec<u8>, stats: &QueryStats) {
    out.push(b'{');
    for (i, (name, value)) in counter_members(stats).into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        match value {
            Counter::Flag(flag) => out.extend_from_slice(if flag { b"true" } else { b"false" }),
            Counter::Count(count) => write_decimal(out, count),
        }
    }
    out.push(b'}');
}

/// Writes `n` in decimal digits.
pub fn write_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

enum Counter {
    Flag(bool),
    Count(u64),
}

/// A statement's counters under their Query API names, in the order a JSON object lists its members (by name).
fn counter_members(stats: &QueryStats) -> [(&'static str, Counter); 14] {
    use Counter::{Count, Flag};
    [
        ("constraintsAdded", Count(stats.constraints_added)),
        ("constraintsRemoved", Count(stats.constraints_removed)),
        ("containsSystemUpdates", Flag(stats.system_updates > 0)),
        ("containsUpdates", Flag(stats.contains_updates())),
        ("indexesAdded", Count(stats.indexes_added)),
        ("indexesRemoved", Count(stats.indexes_removed)),
        ("labelsAdded", Count(stats.labels_added)),
        ("labelsRemoved", Count(stats.labels_removed)),
        ("nodesCreated", Count(stats.nodes_created)),
        ("nodesDeleted", Count(stats.nodes_deleted)),
        ("propertiesSet", Count(stats.properties_set)),
        ("relationshipsCreated", Count(stats.relationships_created)),
        ("relationshipsDeleted", Count(stats.relationships_deleted)),
        ("systemUpdates", Count(stats.system_updates)),
    ]
}

// ---------------------------------------------------------------------------------------------------------------
// JSON to values
// ---------------------------------------------------------------------------------------------------------------

/// Decodes a parameter or property value. In typed JSON, objects of exactly `$type` and `_value` are typed values
/// and anything else is read as plain JSON; in plain JSON every object is a map.
pub fn decode_value(v: &Json, format: Format) -> Result<Value, String> {
    Ok(match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            // An integer literal past i64 (serde_json keeps those up to u64 as integers) is refused, not made a
            // float that would silently lose digits; larger ones are caught in the body's text
            // ([`oversized_integer`]).
            None if n.is_u64() => return Err(out_of_range(&n.to_string())),
            None => Value::Float(n.as_f64().ok_or("a number out of range")?),
        },
        Json::String(s) => Value::string(s.as_str()),
        Json::Array(items) => Value::list(items.iter().map(|i| decode_value(i, format)).collect::<Result<_, _>>()?),
        Json::Object(m) => {
            if format == Format::Typed && m.contains_key("$type") {
                return match (m.len(), m.get("$type"), m.get("_value")) {
                    (2, Some(Json::String(t)), Some(inner)) => decode_typed(t, inner),
                    _ => Err("a typed value is an object of exactly '$type' (a string) and '_value'".into()),
                };
            }
            Value::map(decode_map(m, format)?)
        }
    })
}

fn decode_map(m: &JsonMap<String, Json>, format: Format) -> Result<plexus::cypher::Map, String> {
    m.iter().map(|(k, v)| Ok((Arc::from(k.as_str()), decode_value(v, format)?))).collect()
}

fn decode_typed(type_name: &str, v: &Json) -> Result<Value, String> {
    let text = || v.as_str().ok_or_else(|| format!("a {type_name} value must be a string"));
    let temporal_of = |function: &str| -> Result<Value, String> {
        let s = text()?;
        match temporal::call_function(function, &[Value::string(s)], &Clock::now()) {
            Some(Ok(value)) => Ok(value),
            Some(Err(e)) => Err(format!("bad {type_name} '{s}': {}", e.message)),
            None => Err(format!("bad {type_name} '{s}'")),
        }
    };
    Ok(match type_name {
        "Null" => match v {
            Json::Null => Value::Null,
            _ => return Err("a Null value must be null".into()),
        },
        "Boolean" => Value::Bool(v.as_bool().ok_or("a Boolean value must be true or false")?),
        "Integer" => match v {
            Json::String(s) => Value::Int(s.trim().parse().map_err(|_| format!("bad Integer '{s}'"))?),
            Json::Number(n) => Value::Int(n.as_i64().ok_or_else(|| format!("bad Integer {n}"))?),
            _ => return Err("an Integer value must be a string of digits".into()),
        },
        "Float" => match v {
            Json::String(s) => Value::Float(parse_float(s).ok_or_else(|| format!("bad Float '{s}'"))?),
            Json::Number(n) => Value::Float(n.as_f64().ok_or_else(|| format!("bad Float {n}"))?),
            _ => return Err("a Float value must be a string".into()),
        },
        "String" => Value::string(text()?),
        "Base64" => {
            let s = text()?;
            let bytes =
                base64::engine::general_purpose::STANDARD.decode(s).map_err(|e| format!("bad Base64 value: {e}"))?;
            Value::Bytes(bytes.into())
        }
        "List" => match v {
            Json::Array(items) => {
                Value::list(items.iter().map(|i| decode_value(i, Format::Typed)).collect::<Result<_, _>>()?)
            }
            _ => return Err("a List value must be an array".into()),
        },
        "Map" => match v {
            Json::Object(m) => Value::map(decode_map(m, Format::Typed)?),
            _ => return Err("a Map value must be an object".into()),
        },
        "Date" => temporal_of("date")?,
        "LocalTime" => temporal_of("localtime")?,
        "Time" => temporal_of("time")?,
        "LocalDateTime" => temporal_of("localdatetime")?,
        "OffsetDateTime" | "ZonedDateTime" => temporal_of("datetime")?,
        "Duration" => temporal_of("duration")?,
        "Point" => Value::from_point(parse_point_text(text()?)?),
        "Node" | "Relationship" | "Path" => {
            return Err("nodes, relationships and paths cannot be passed as parameters; pass their ids".into())
        }
        other => return Err(format!("unknown $type '{other}'")),
    })
}

fn parse_float(s: &str) -> Option<f64> {
    match s.trim() {
        "NaN" => Some(f64::NAN),
        "Infinity" | "+Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        other => other.parse().ok(),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Request bodies
// ---------------------------------------------------------------------------------------------------------------

/// Why an integer literal is refused.
fn out_of_range(literal: &str) -> String {
    format!(
        "the integer {literal} is out of range: integers must lie between {} and {} (write a number with a \
         fraction or an exponent, like 1.0e19, for a float)",
        i64::MIN,
        i64::MAX
    )
}

/// What the integer literals (digits, no fraction or exponent) of a JSON text need before serde_json reads them:
/// the first that does not fit in an i64 (serde_json reads those past u64 as floats), and where each `-0` starts
/// (serde_json reads it as the float -0.0, where it is the integer 0).
struct IntegerLiterals<'b> {
    oversized: Option<&'b str>,
    negative_zeros: Vec<usize>,
}

fn integer_literals(body: &[u8]) -> IntegerLiterals<'_> {
    integer_literals_skipping(body, past_string)
}

/// Where the text of the string opened at `open` ends: just past its closing quote, or past the end of `body`
/// when it has none. From one quote or backslash to the next: a string's text (a statement's, mostly) is most of
/// a body, and stepping through it a byte at a time was most of the scan's cost.
fn past_string(body: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    while i < body.len() {
        match memchr::memchr2(b'"', b'\\', &body[i..]) {
            Some(at) if body[i + at] == b'\\' => i += at + 2,
            Some(at) => return i + at + 1,
            None => return body.len() + 1,
        }
    }
    i + 1
}

/// [`integer_literals`] with strings skipped by `past_string` (the tests pass a byte-by-byte one).
#[inline(always)]
fn integer_literals_skipping(body: &[u8], past_string: impl Fn(&[u8], usize) -> usize) -> IntegerLiterals<'_> {
    let mut found = IntegerLiterals { oversized: None, negative_zeros: Vec::new() };
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'"' => i = past_string(body, i),
            b'-' | b'0'..=b'9' => {
                let start = i;
                i += 1;
                while i < body.len() && matches!(body[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    i += 1;
                }
                let token = std::str::from_utf8(&body[start..i]).unwrap_or_default();
                let digits = token.strip_prefix('-').unwrap_or(token);
                if token == "-0" {
                    found.negative_zeros.push(start);
                } else if !digits.is_empty()
                    && digits.bytes().all(|c| c.is_ascii_digit())
                    && token.parse::<i64>().is_err()
                    && found.oversized.is_none()
                {
                    found.oversized = Some(token);
                }
            }
            _ => i += 1,
        }
    }
    found
}

/// Parses a request body as JSON, refusing integer literals out of range and reading `-0` as the integer 0.
fn parse_json(body: &[u8]) -> Result<Json, ServerError> {
    let literals = integer_literals(body);
    if let Some(literal) = literals.oversized {
        // Only a body that parses is told about its numbers.
        serde_json::from_slice::<serde::de::IgnoredAny>(body)
            .map_err(|e| invalid_format(format!("the request body is not valid JSON: {e}")))?;
        return Err(invalid(out_of_range(literal)));
    }
    let unsigned;
    let body = if literals.negative_zeros.is_empty() {
        body
    } else {
        let mut copy = body.to_vec();
        for at in literals.negative_zeros {
            copy[at] = b' ';
        }
        unsigned = copy;
        &unsigned[..]
    };
    serde_json::from_slice::<Json>(body).map_err(|e| invalid_format(format!("the request body is not valid JSON: {e}")))
}

/// Parses a body as a JSON object; an empty body is an empty object (commit and rollback send none).
fn parse_object(body: &[u8]) -> Result<JsonMap<String, Json>, ServerError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(JsonMap::new());
    }
    match parse_json(body)? {
        Json::Object(m) => Ok(m),
        _ => Err(invalid_format("the request body must be a JSON object")),
    }
}

fn parse_array(body: &[u8]) -> Result<Vec<Json>, ServerError> {
    match parse_json(body)? {
        Json::Array(items) => Ok(items),
        _ => Err(invalid_format("the request body must be a JSON array")),
    }
}

/// A Query API request: one statement (optional when opening or committing a transaction) and its settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryRequest {
    pub statement: Option<String>,
    pub parameters: Params,
    pub access_mode: AccessMode,
    pub bookmarks: Vec<String>,
    pub impersonated_user: Option<String>,
    /// `includeCounters: false`. Neo4j sends counters only when asked; here they are sent unless refused, so
    /// clients written against earlier answers, which always had them, keep working.
    pub omit_counters: bool,
}

/// Parses a Query API request body (`{statement, parameters, accessMode, bookmarks, includeCounters,
/// impersonatedUser}`).
pub fn parse_query_request(body: &[u8], format: Format) -> Result<QueryRequest, ServerError> {
    let object = parse_object(body)?;
    let mut request = QueryRequest::default();
    for (key, value) in object {
        match key.as_str() {
            "statement" => match value {
                // Taken from the parsed tree rather than copied: a statement is most of a point read's body.
                Json::String(s) => request.statement = Some(s),
                _ => return Err(invalid("'statement' must be a string")),
            },
            "parameters" => request.parameters = parse_parameters(&value, format)?,
            "accessMode" => {
                request.access_mode = match value.as_str().map(str::to_ascii_lowercase).as_deref() {
                    Some("read") => AccessMode::Read,
                    Some("write") => AccessMode::Write,
                    _ => return Err(invalid("'accessMode' must be \"Read\" or \"Write\"")),
                }
            }
            "bookmarks" => {
                let items = value.as_array().ok_or_else(|| invalid("'bookmarks' must be a list of strings"))?;
                request.bookmarks = items
                    .iter()
                    .map(|b| b.as_str().map(str::to_string).ok_or_else(|| invalid("bookmarks must be strings")))
                    .collect::<Result<_, _>>()?;
            }
            "impersonatedUser" => {
                if !value.is_null() {
                    let user = value.as_str().ok_or_else(|| invalid("'impersonatedUser' must be a string"))?;
                    request.impersonated_user = Some(user.to_string());
                }
            }
            "includeCounters" => {
                let include = value.as_bool().ok_or_else(|| invalid("'includeCounters' must be true or false"))?;
                request.omit_counters = !include;
            }
            other => return Err(invalid(format!("unknown field '{other}' in the request"))),
        }
    }
    Ok(request)
}

/// Converts a `parameters` object into query parameters.
pub fn parse_parameters(value: &Json, format: Format) -> Result<Params, ServerError> {
    match value {
        Json::Null => Ok(Params::new()),
        Json::Object(m) => m
            .iter()
            .map(|(k, v)| {
                let value = decode_value(v, format).map_err(|e| invalid(format!("parameter '{k}': {e}")))?;
                Ok((k.clone(), value))
            })
            .collect(),
        _ => Err(invalid("'parameters' must be an object")),
    }
}

/// Properties to store: every value must be storable (no maps, no nested lists of mixed kinds).
pub fn parse_properties(value: &Json, format: Format) -> Result<Vec<(String, plexus::Value)>, ServerError> {
    let m = match value {
        Json::Null => return Ok(Vec::new()),
        Json::Object(m) => m,
        _ => return Err(invalid("'properties' must be an object")),
    };
    m.iter()
        .map(|(k, v)| {
            let stored = decode_value(v, format)
                .and_then(|v| v.to_stored())
                .map_err(|e| invalid(format!("property '{k}': {e}")))?;
            Ok((k.clone(), stored))
        })
        .collect()
}

/// A reference to a node in a REST body or path: its id (`7`, `"7"`) or element id (`"n:7"`).
pub fn parse_node_ref(value: &Json) -> Result<u64, ServerError> {
    let parsed = match value {
        Json::Number(n) => n.as_u64(),
        Json::String(s) => parse_node_id(s),
        _ => None,
    };
    parsed.ok_or_else(|| invalid(format!("{value} is not a node id: use a number or an element id like \"n:7\"")))
}

/// A node id from a URL segment or string: `7` or `n:7`.
pub fn parse_node_id(s: &str) -> Option<u64> {
    s.strip_prefix("n:").unwrap_or(s).parse().ok()
}

/// A relationship id from a URL segment or string: `7` or `r:7`.
pub fn parse_rel_id(s: &str) -> Option<u64> {
    s.strip_prefix("r:").unwrap_or(s).parse().ok()
}

/// `POST /db/{name}/nodes`: labels and properties of the new node.
#[derive(Clone, Debug, PartialEq)]
pub struct NewNode {
    pub labels: Vec<String>,
    pub properties: Vec<(String, plexus::Value)>,
}

pub fn parse_new_node(body: &[u8], format: Format) -> Result<NewNode, ServerError> {
    let object = parse_object(body)?;
    let mut node = NewNode { labels: Vec::new(), properties: Vec::new() };
    for (key, value) in &object {
        match key.as_str() {
            "labels" => node.labels = parse_names(value, "labels")?,
            "properties" => node.properties = parse_properties(value, format)?,
            other => return Err(invalid(format!("unknown field '{other}': a node has 'labels' and 'properties'"))),
        }
    }
    Ok(node)
}

fn parse_names(value: &Json, what: &str) -> Result<Vec<String>, ServerError> {
    let items = value.as_array().ok_or_else(|| invalid(format!("'{what}' must be a list of strings")))?;
    items
        .iter()
        .map(|i| match i.as_str() {
            Some(s) if !s.is_empty() => Ok(s.to_string()),
            _ => Err(invalid(format!("'{what}' must be a list of non-empty strings"))),
        })
        .collect()
}

/// A properties update (`PATCH`): the object of properties to set; null removes a property.
/// The properties a PATCH sets (null removes one). The body is required: an empty one is more likely a client's
/// mistake than a request to change nothing.
pub fn parse_property_update(body: &[u8], format: Format) -> Result<Vec<(String, plexus::Value)>, ServerError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(invalid_format(
            "the request body must be a JSON object of the properties to set (null removes one); it is empty",
        ));
    }
    let object = parse_object(body)?;
    parse_properties(&Json::Object(object), format)
}

/// One relationship of `POST /db/{name}/relationships` or of an edge batch.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub src: u64,
    pub rel_type: String,
    pub dst: u64,
    pub properties: Vec<(String, plexus::Value)>,
}

fn parse_edge(value: &Json, format: Format, with_properties: bool) -> Result<Edge, ServerError> {
    let m = value.as_object().ok_or_else(|| invalid("an edge must be an object {src, type, dst, properties}"))?;
    let mut src = None;
    let mut dst = None;
    let mut rel_type = None;
    let mut properties = Vec::new();
    for (key, value) in m {
        match key.as_str() {
            "src" | "start" => src = Some(parse_node_ref(value)?),
            "dst" | "end" => dst = Some(parse_node_ref(value)?),
            "type" => match value.as_str() {
                Some(t) if !t.is_empty() => rel_type = Some(t.to_string()),
                _ => return Err(invalid("'type' must be a non-empty string")),
            },
            "properties" if with_properties => properties = parse_properties(value, format)?,
            other => return Err(invalid(format!("unknown field '{other}' in an edge"))),
        }
    }
    Ok(Edge {
        src: src.ok_or_else(|| invalid("an edge needs 'src'"))?,
        rel_type: rel_type.ok_or_else(|| invalid("an edge needs 'type'"))?,
        dst: dst.ok_or_else(|| invalid("an edge needs 'dst'"))?,
        properties,
    })
}

/// `POST /db/{name}/relationships`: `{src, type, dst, properties}` (`start`/`end` also accepted).
pub fn parse_new_relationship(body: &[u8], format: Format) -> Result<Edge, ServerError> {
    let object = parse_object(body)?;
    parse_edge(&Json::Object(object), format, true)
}

/// `POST /db/{name}/edges/upsert` (`with_properties`) or `/edges/remove`: a JSON array of edges.
pub fn parse_edge_batch(body: &[u8], format: Format, with_properties: bool) -> Result<Vec<Edge>, ServerError> {
    parse_array(body)?.iter().map(|e| parse_edge(e, format, with_properties)).collect()
}

#[cfg(test)]
mod tests;
