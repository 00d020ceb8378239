use super::*;

/// The string skip before it jumped with `memchr`, kept as the reference: a byte at a time.
fn past_string_byte_by_byte(body: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    while i < body.len() {
        match body[i] {
            b'\\' => i += 2,
            b'"' => break,
            _ => i += 1,
        }
    }
    i + 1
}

proptest::proptest! {
    #[test]
    fn integer_literals_are_found_as_a_byte_by_byte_scan_finds_them(
        pieces in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just("\"".to_string()),
                proptest::strategy::Just("\\".to_string()),
                proptest::strategy::Just("-0".to_string()),
                proptest::strategy::Just("99999999999999999999".to_string()),
                "[-0-9.eE+ ,:{}\\[\\]a-z]{0,6}",
            ],
            0..40,
        )
    ) {
        let body = pieces.concat();
        let found = integer_literals(body.as_bytes());
        let expected = integer_literals_skipping(body.as_bytes(), past_string_byte_by_byte);
        proptest::prop_assert_eq!(
            (found.oversized, found.negative_zeros),
            (expected.oversized, expected.negative_zeros)
        );
    }
}

#[test]
fn counters_written_as_text_are_the_counters_object() {
    let varied = QueryStats {
        nodes_created: 1,
        nodes_deleted: 10,
        relationships_created: 12_345,
        properties_set: u64::MAX,
        labels_removed: 99,
        system_updates: 3,
        ..QueryStats::default()
    };
    for stats in [QueryStats::default(), varied, QueryStats { system_updates: 1, ..QueryStats::default() }] {
        let mut written = Vec::new();
        write_counters(&mut written, &stats);
        assert_eq!(String::from_utf8(written).unwrap(), counters(&stats).to_string());
    }
    let mut digits = Vec::new();
    for n in [0, 7, 10, 1_000_000, u64::MAX] {
        digits.clear();
        write_decimal(&mut digits, n);
        assert_eq!(digits, n.to_string().into_bytes());
    }
}
use plexus::value::{Date, DateTime, Duration};

fn round_trip(v: ResultValue) -> Value {
    decode_value(&encode(&v, Format::Typed), Format::Typed).unwrap()
}

#[test]
fn typed_values_round_trip() {
    assert_eq!(round_trip(ResultValue::Int(i64::MIN)), Value::Int(i64::MIN));
    assert_eq!(round_trip(ResultValue::Float(0.1)), Value::Float(0.1));
    assert!(matches!(round_trip(ResultValue::Float(f64::NAN)), Value::Float(f) if f.is_nan()));
    assert_eq!(round_trip(ResultValue::Float(f64::NEG_INFINITY)), Value::Float(f64::NEG_INFINITY));
    assert_eq!(round_trip(ResultValue::Bytes(vec![0u8, 255, 7].into())), Value::Bytes(vec![0u8, 255, 7].into()));
    assert_eq!(round_trip(ResultValue::Date(Date { days: -400 })), Value::Date(Date { days: -400 }));
    let zoned = DateTime { seconds: 1_700_000_000, nanos: 5, offset_seconds: 3600, zone: Some("Europe/Paris".into()) };
    assert_eq!(round_trip(ResultValue::DateTime(Box::new(zoned.clone()))), Value::DateTime(Box::new(zoned)));
    let d = Duration { months: 14, days: 3, seconds: -5, nanos: 250 };
    assert_eq!(round_trip(ResultValue::Duration(d)), Value::duration(d));
    for (crs, coords, text) in [
        (Crs::Cartesian, &[1.5, -2.0][..], "SRID=7203;POINT (1.5 -2.0)"),
        (Crs::Wgs84_3d, &[12.5, 56.0, 100.0][..], "SRID=4979;POINT Z (12.5 56.0 100.0)"),
    ] {
        let p = Point::new(crs, coords).unwrap();
        assert_eq!(encode(&ResultValue::Point(p), Format::Typed), json!({"$type": "Point", "_value": text}));
        assert_eq!(round_trip(ResultValue::Point(p)), Value::from_point(p));
    }
    for bad in [
        "SRID=7203;POINT (1.0)",
        "SRID=1;POINT (1 2)",
        "SRID=4326;POINT (1 95)",
        "POINT (1 2)",
        "SRID=9157;POINT (1 2)",
    ] {
        assert!(decode_value(&json!({"$type": "Point", "_value": bad}), Format::Typed).is_err(), "{bad}");
    }
    let list = ResultValue::List(vec![ResultValue::Null, ResultValue::String("x".into())]);
    assert_eq!(round_trip(list), Value::list(vec![Value::Null, Value::string("x")]));
}

#[test]
fn plain_json_is_natural() {
    let n = NodeData { id: 3, labels: vec!["P".into()], properties: BTreeMap::new() };
    assert_eq!(encode(&ResultValue::Node(Box::new(n)), Format::Plain)["elementId"], "n:3");
    assert_eq!(encode(&ResultValue::Float(f64::INFINITY), Format::Plain), "Infinity");
    assert_eq!(encode(&ResultValue::Date(Date { days: 0 }), Format::Plain), "1970-01-01");
    // In plain JSON a typed-looking object is just a map.
    let v = decode_value(&json!({"$type": "Integer", "_value": "1"}), Format::Plain).unwrap();
    assert!(matches!(v, Value::Map(_)));
}

#[test]
fn integers_out_of_range_are_refused_and_floats_stay_floats() {
    for big in ["9223372036854775808", "-9223372036854775809", "18446744073709551616", "1234567890123456789012"] {
        let body = format!(r#"{{"statement": "RETURN $x", "parameters": {{"x": [1, {big}]}}}}"#);
        let err = parse_query_request(body.as_bytes(), Format::Plain).unwrap_err();
        assert_eq!(err.code, "Neo.ClientError.Request.Invalid");
        assert!(err.message.contains(&format!("the integer {big} is out of range")), "{}", err.message);
        let err = parse_property_update(format!(r#"{{"big": {big}}}"#).as_bytes(), Format::Plain).unwrap_err();
        assert!(err.message.contains("out of range"), "{}", err.message);
    }
    let body = br#"{"statement": "RETURN '9223372036854775808 \" 99999999999999999999'", "parameters": {
        "min": -9223372036854775808, "max": 9223372036854775807, "f": 9223372036854775808.0, "e": 1e300,
        "s": "18446744073709551616"}}"#;
    let r = parse_query_request(body, Format::Plain).unwrap();
    assert_eq!(r.parameters["min"], Value::Int(i64::MIN));
    assert_eq!(r.parameters["max"], Value::Int(i64::MAX));
    assert_eq!(r.parameters["f"], Value::Float(9223372036854775808.0));
    assert_eq!(r.parameters["e"], Value::Float(1e300));
    assert!(decode_value(&json!(9223372036854775808u64), Format::Plain).is_err());
}

#[test]
fn minus_zero_is_the_integer_zero_and_minus_zero_point_zero_a_float() {
    let body = br#"{"statement": "RETURN '-0'", "parameters": {"i": -0, "l": [-0,-0], "f": -0.0, "e": -0e1}}"#;
    let r = parse_query_request(body, Format::Plain).unwrap();
    assert_eq!(r.parameters["i"], Value::Int(0));
    assert_eq!(r.parameters["l"], Value::list(vec![Value::Int(0), Value::Int(0)]));
    assert!(matches!(r.parameters["f"], Value::Float(f) if f == 0.0 && f.is_sign_negative()));
    assert!(matches!(r.parameters["e"], Value::Float(f) if f == 0.0 && f.is_sign_negative()));
    assert_eq!(
        parse_query_request(br#"{"statement": "RETURN 1", "x": [0 -0]}"#, Format::Plain).unwrap_err().code,
        "Neo.ClientError.Request.InvalidFormat"
    );
}

#[test]
fn typed_values_need_both_fields() {
    for bad in [json!({"$type": "Integer"}), json!({"$type": "Integer", "_value": "1", "x": 1}), json!({"$type": 1})] {
        let err = decode_value(&bad, Format::Typed).unwrap_err();
        assert!(err.contains("exactly '$type'"), "{bad}: {err}");
    }
    assert_eq!(decode_value(&json!({"$type": "Integer", "_value": "7"}), Format::Typed).unwrap(), Value::Int(7));
    assert!(matches!(decode_value(&json!({"type": "Integer"}), Format::Typed).unwrap(), Value::Map(_)));
}

#[test]
fn requests_are_checked_field_by_field() {
    let r = parse_query_request(br#"{"statement": "RETURN $x", "parameters": {"x": 1}}"#, Format::Plain).unwrap();
    assert_eq!(r.parameters["x"], Value::Int(1));
    assert_eq!(parse_query_request(b"", Format::Plain).unwrap(), QueryRequest::default());
    let err = parse_query_request(b"{\"statement\": 1}", Format::Plain).unwrap_err();
    assert_eq!(err.code, "Neo.ClientError.Request.Invalid");
    let err = parse_query_request(b"{nope", Format::Plain).unwrap_err();
    assert_eq!(err.code, "Neo.ClientError.Request.InvalidFormat");
    let err = parse_query_request(br#"{"parameters": {"p": {"$type": "Point", "_value": "x"}}}"#, Format::Typed);
    assert!(err.unwrap_err().message.contains("bad Point"));
    let edges =
        parse_edge_batch(br#"[{"src": "n:1", "type": "T", "dst": 2, "properties": {"w": 1.5}}]"#, Format::Plain, true)
            .unwrap();
    assert_eq!((edges[0].src, edges[0].dst), (1, 2));
    assert!(parse_edge_batch(br#"[{"src": 1, "type": "T"}]"#, Format::Plain, false).is_err());
    assert!(parse_new_node(br#"{"properties": {"m": {"a": 1}}}"#, Format::Plain).is_err());
}
