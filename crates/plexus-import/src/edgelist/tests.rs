use super::*;

fn parse_str(s: &str) -> EdgeList {
    parse(s.as_bytes(), &Format::default(), 0).unwrap()
}

#[test]
fn plain_integer_lines_and_every_other_kind_of_line_mix() {
    let input = "1,2\n3,4\r\n# c\n\n5 ,6\n-7,8\n12345678901234567890,1\nx,2\n1234567890123456789,3\n9,10";
    let format = Format { id_type: Some(IdType::Integer), ..Format::default() };
    let e = parse(input.as_bytes(), &format, 5).unwrap();
    let VertexIds::Integer(ids) = &e.vertices else { panic!("integer ids") };
    let pairs: Vec<(i64, i64)> = e.src.iter().zip(&e.dst).map(|(&s, &d)| (ids[s as usize], ids[d as usize])).collect();
    assert_eq!(pairs, [(1, 2), (3, 4), (5, 6), (-7, 8), (1234567890123456789, 3), (9, 10)]);
    let bad: Vec<u64> = e.bad_lines.iter().map(|b| b.line).collect();
    assert_eq!(bad, [7, 8]);
    // Line numbers stay right after a run of plain lines split across chunks.
    let mut big: String = (0..300_000).map(|i| format!("{i},{}\n", i + 1)).collect();
    big.push_str("oops\n7,8\n");
    let Err(err) = parse(big.as_bytes(), &Format::default(), 0) else { panic!("a bad line") };
    assert_eq!(err.bad.line, 300_001);
}

#[test]
fn many_string_ids_over_several_chunks_and_threads_keep_the_order_of_first_appearance() {
    // Enough ends for the numbering to split names over threads, with quoted, padded and non-ASCII lines
    // among the plain ones (chunks with those take the general path).
    let mut rng = plexus::random::SplitMix(0x2545_f491_4f6c_dd1d);
    let mut text = String::new();
    let mut want: Vec<(String, String)> = Vec::new();
    for i in 0..600_000u64 {
        let (a, b) = (format!("u{}", rng.below(50_000)), format!("u{}", rng.below(50_000)));
        let line = match i % 100_003 {
            7 => format!("\"{a}\",{b}\n"),
            8 => format!(" {a} , {b}\n"),
            9 => format!("{a},{b}é\n"),
            _ => format!("{a},{b}\n"),
        };
        text.push_str(&line);
        let b = if i % 100_003 == 9 { format!("{b}é") } else { b };
        want.push((a, b));
    }
    let format = Format { id_type: Some(IdType::String), ..Format::default() };
    let e = parse(text.as_bytes(), &format, 0).unwrap();
    let VertexIds::String(names) = &e.vertices else { panic!("string ids") };
    let mut seen: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (i, (a, b)) in want.iter().enumerate() {
        for (name, got) in [(a, e.src[i]), (b, e.dst[i])] {
            let n = *seen.entry(name).or_insert_with(|| {
                order.push(name);
                (order.len() - 1) as u32
            });
            assert_eq!(got, n, "edge {i}, {name}");
        }
    }
    assert_eq!(names.iter().map(|n| &**n).collect::<Vec<_>>(), order);
}

#[test]
fn detects_delimiters_headers_and_weights() {
    let e = parse_str("source,target,weight\n1,2,0.5\n2,3,1.5\n");
    assert_eq!((e.delimiter, e.header), (Delimiter::Comma, true));
    assert_eq!(e.src.len(), 2);
    assert_eq!(e.weight.as_deref(), Some(&[0.5, 1.5][..]));
    let e = parse_str("# a comment\n1\t2\n\n2\t3\r\n");
    assert_eq!((e.delimiter, e.header), (Delimiter::Tab, false));
    assert!(e.weight.is_none());
    let e = parse_str("1  2\n3 4\n");
    assert_eq!(e.delimiter, Delimiter::Space);
    assert_eq!(e.src.len(), 2);
}

#[test]
fn integer_ids_are_numbered_by_value() {
    let e = parse_str("10,5\n5,7\n");
    match &e.vertices {
        VertexIds::Integer(ids) => assert_eq!(ids, &vec![5, 7, 10]),
        other => panic!("{other:?}"),
    }
    assert_eq!((e.src.clone(), e.dst.clone()), (vec![2, 0], vec![0, 1]));
    // Sparse ids go through the hash map path.
    let e = parse_str("1,9000000000000\n9000000000000,-4\n");
    match &e.vertices {
        VertexIds::Integer(ids) => assert_eq!(ids, &vec![-4, 1, 9_000_000_000_000]),
        other => panic!("{other:?}"),
    }
    assert_eq!((e.src, e.dst), (vec![1, 2], vec![2, 0]));
}

#[test]
fn string_ids_in_order_of_appearance() {
    let e = parse_str("alice bob\nbob carol\n");
    match &e.vertices {
        VertexIds::String(ids) => {
            assert_eq!(ids.iter().map(|s| &**s).collect::<Vec<_>>(), ["alice", "bob", "carol"])
        }
        other => panic!("{other:?}"),
    }
    assert_eq!((e.src, e.dst), (vec![0, 1], vec![1, 2]));
}

#[test]
fn quoted_fields_as_spreadsheets_write_them() {
    let e = parse_str("\"from\",\"to\"\n\"alice\",\"bob\"\n\"New York, NY\" , Boston\n");
    assert!(e.header && e.delimiter == Delimiter::Comma);
    let VertexIds::String(names) = &e.vertices else { panic!("string ids") };
    assert_eq!(names.iter().map(|n| &**n).collect::<Vec<_>>(), ["alice", "bob", "New York, NY", "Boston"]);
    assert_eq!((e.src, e.dst), (vec![0, 2], vec![1, 3]));
    // A comma inside quotes does not make a tab-separated file comma-separated; quoted integers are integers.
    let e = parse_str("\"1,5\"\tx\n");
    assert_eq!(e.delimiter, Delimiter::Tab);
    let e = parse_str("\"1\",\"2\",\"0.5\"\n");
    assert!(matches!(&e.vertices, VertexIds::Integer(v) if v == &[1, 2]));
    assert_eq!(e.weight, Some(vec![0.5]));
    for (input, column, what) in [
        ("a,b\n\"c,d\n", 1, "not closed"),
        ("a,b\n\"c\"x,d\n", 4, "after the closing quote"),
        ("a,b\nc\"x,d\n", 1, "inside an unquoted field"),
        ("a,b\n\"c\"\"x\",d\n", 3, "holds a quote"),
    ] {
        let err = parse(input.as_bytes(), &Format::default(), 0).unwrap_err();
        assert_eq!((err.bad.line, err.bad.column), (2, column), "{input:?}: {err}");
        assert!(err.bad.message.contains(what), "{input:?}: {err}");
    }
}

#[test]
fn bad_lines_point_at_line_and_column() {
    let input = "1,2\n3,x\n4,5\n";
    let fmt = Format { id_type: Some(IdType::Integer), ..Format::default() };
    let err = parse(input.as_bytes(), &fmt, 0).unwrap_err();
    assert_eq!((err.bad.line, err.bad.column), (2, 3), "{err}");
    assert!(err.to_string().contains("\"3,x\""), "{err}");
    let ok = parse(input.as_bytes(), &fmt, 1).unwrap();
    assert_eq!(ok.src.len(), 2);
    assert_eq!(ok.bad_lines.len(), 1);
    let err = parse(b"1,2\n1,2,3,4\n", &Format::default(), 0).unwrap_err();
    assert!(err.bad.message.contains("2 or 3 fields"), "{err}");
    let err = parse(b"1,2,0.5\n1,2,abc\n", &Format::default(), 0).unwrap_err();
    assert_eq!((err.bad.line, err.bad.column), (2, 5), "{err}");
}

#[test]
fn large_inputs_split_into_chunks_keep_line_numbers() {
    let mut s = String::new();
    for i in 0..200_000 {
        s.push_str(&format!("{},{}\n", i, i + 1));
    }
    s.push_str("oops\n");
    let err = parse(s.as_bytes(), &Format { id_type: Some(IdType::Integer), ..Format::default() }, 0).unwrap_err();
    assert_eq!(err.bad.line, 200_001, "{err}");
    let e = parse(s.as_bytes(), &Format::default(), 1).unwrap();
    assert_eq!(e.src.len(), 200_000);
}

#[test]
fn a_string_id_after_the_lines_the_id_type_was_guessed_from_suggests_id_type_string() {
    let mut input: String = (1..=1500).map(|i| format!("{i},{}\n", i + 1)).collect();
    input.push_str("x,y\n");
    let err = parse(input.as_bytes(), &Format::default(), 0).unwrap_err();
    assert_eq!((err.bad.line, err.bad.column), (1501, 1));
    assert!(err.to_string().contains("'x' is not an integer vertex id"), "{err}");
    assert!(err.to_string().contains("add --id-type string"), "{err}");
    // Integers asked for: no hint.
    let format = Format { id_type: Some(IdType::Integer), ..Format::default() };
    let err = parse(input.as_bytes(), &format, 0).unwrap_err();
    assert!(!err.to_string().contains("--id-type"), "{err}");
    // Strings asked for: every line is an edge.
    let format = Format { id_type: Some(IdType::String), ..Format::default() };
    assert_eq!(parse(input.as_bytes(), &format, 0).unwrap().src.len(), 1501);
}

#[test]
fn headers_of_string_id_lists_are_recognised_and_vertex_names_are_not() {
    let names = |e: &EdgeList| match &e.vertices {
        VertexIds::String(ids) => ids.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    // Column names made of the words edge lists use.
    for input in ["from_id,to_id\nu1,u2\n", "Source Node,Target Node\nu1,u2\n", "src-id\tdst-id\nu1\tu2\n"] {
        let e = parse_str(input);
        assert!(e.header, "{input:?}");
        assert_eq!(names(&e), ["u1", "u2"], "{input:?}");
    }
    // A third field that is no number above weights.
    let e = parse_str("x,y,w\nu1,u2,0.5\n");
    assert!(e.header);
    assert_eq!((names(&e), e.weight), (vec!["u1".to_string(), "u2".to_string()], Some(vec![0.5])));
    // Vertex names stay data, numbered ones too.
    for input in ["alice,bob\nbob,carol\n", "node_1,node_2\nnode_2,node_3\n", "start,x\nx,end\n", "a,b\nb,c\n"] {
        assert!(!parse_str(input).header, "{input:?}");
    }
}

#[test]
fn ids_with_leading_zeros_or_plus_signs_are_not_taken_for_integers() {
    // In the lines the type is guessed from: strings, kept as written.
    let e = parse_str("01,02\n1,3\n");
    let VertexIds::String(ids) = &e.vertices else { panic!("string ids") };
    assert_eq!(ids.iter().map(|s| &**s).collect::<Vec<_>>(), ["01", "02", "1", "3"]);
    assert!(matches!(parse_str("+1,2\n1,3\n").vertices, VertexIds::String(_)));
    assert!(matches!(parse_str("0,-1\n10,-20\n").vertices, VertexIds::Integer(_)));
    // Past those lines: refused, not merged with `7`.
    let mut input: String = (1..=2000).map(|i| format!("{i},{}\n", i + 1)).collect();
    input.push_str("007,1\n");
    let Err(err) = parse(input.as_bytes(), &Format::default(), 0) else { panic!("a bad line") };
    assert_eq!(err.bad.line, 2001);
    assert!(err.bad.message.contains("leading zero") && err.bad.message.contains("--id-type string"));
    // Asked for integers: read as numbers.
    let format = Format { id_type: Some(IdType::Integer), ..Format::default() };
    let e = parse(input.as_bytes(), &format, 0).unwrap();
    assert_eq!(e.src.len(), 2001);
}

#[test]
fn bad_lines_are_quoted_without_control_characters() {
    let bad =
        BadLine { line: 2, column: 3, message: "'\u{1b}[31mRED' is odd".into(), text: "1,\u{1b}[31mRED\u{7}".into() };
    let shown = bad.to_string();
    assert!(!shown.chars().any(char::is_control), "{shown:?}");
    assert!(shown.contains(r"\u001B[31mRED\u0007"), "{shown}");
}

#[test]
fn a_first_line_with_numbers_or_nothing_for_ids_is_data_not_a_header() {
    // Each of these first lines is data with a bad value: reported on line 1, never dropped as a header.
    for (input, column) in
        [("1,2,abc\n2,3,1\n4,5,2\n", 5), ("1,2,\n2,3,1\n", 5), ("1,2,N/A\n2,3,1\n", 5), (",2\n2,3\n", 1)]
    {
        let err = parse(input.as_bytes(), &Format::default(), 0).unwrap_err();
        assert_eq!((err.bad.line, err.bad.column), (1, column), "{input:?}: {err}");
    }
    // A name above numbers is still a header; a name beside a number is a vertex (the ids are then strings).
    assert!(parse_str("a,b\n1,2\n").header);
    let e = parse_str("x,1\n2,3\n");
    assert!(!e.header);
    assert_eq!(e.src.len(), 2);
}

#[test]
fn a_tab_separated_list_with_commas_in_its_names_is_tab_separated() {
    let e = parse_str("Smith, Ann\tDoe\nJones, Bob\tRoe\n");
    assert_eq!(e.delimiter, Delimiter::Tab);
    let VertexIds::String(names) = &e.vertices else { panic!("string ids") };
    assert_eq!(names.iter().map(|n| &**n).collect::<Vec<_>>(), ["Smith, Ann", "Doe", "Jones, Bob", "Roe"]);
    // Commas that split every line into two or three fields still make a comma-separated list.
    assert_eq!(parse_str("1,2,0.5\n2,3,1.5\n").delimiter, Delimiter::Comma);
    assert_eq!(parse_str("a b\nc d\n").delimiter, Delimiter::Space);
}

#[test]
fn space_separated_fields_may_be_quoted() {
    let e = parse_str("\"1\" \"2\"\n");
    assert!(matches!(&e.vertices, VertexIds::Integer(v) if v == &[1, 2]));
    let e = parse_str("\"a b\" c\n\"c\"  d\n");
    let VertexIds::String(names) = &e.vertices else { panic!("string ids") };
    assert_eq!(names.iter().map(|n| &**n).collect::<Vec<_>>(), ["a b", "c", "d"]);
    for (input, column, what) in [
        ("a b\n\"c d\n", 1, "not closed"),
        ("a b\n\"c\"x d\n", 4, "after the closing quote"),
        ("a b\nc\"x d\n", 1, "inside"),
    ] {
        let err = parse(input.as_bytes(), &Format::default(), 0).unwrap_err();
        assert_eq!((err.bad.line, err.bad.column), (2, column), "{input:?}: {err}");
        assert!(err.bad.message.contains(what), "{input:?}: {err}");
    }
}

#[test]
fn a_failure_past_the_skipped_lines_lists_them() {
    let input: String =
        (0..14).map(|i| if i % 2 == 0 { format!("{i},x\n") } else { format!("{i},{}\n", i + 1) }).collect();
    let err = parse(input.as_bytes(), &Format { id_type: Some(IdType::Integer), ..Format::default() }, 6).unwrap_err();
    assert_eq!((err.bad.line, err.skipped), (13, 6));
    let text = err.to_string();
    assert!(
        text.contains("after skipping 6 bad lines: line 1, column 3") && text.contains("line 11, column 4"),
        "{text}"
    );
    let err = parse(input.repeat(2).as_bytes(), &Format { id_type: Some(IdType::Integer), ..Format::default() }, 12)
        .unwrap_err();
    assert!(err.to_string().ends_with("; and 2 more)"), "{err}");
}

#[test]
fn a_bad_line_of_another_width_does_not_make_the_ids_strings() {
    let e = parse("1,2,0.5\n2,3,1.5\n3,x,1.0,extra\n3,1,2.5\n".as_bytes(), &Format::default(), 1).unwrap();
    assert!(matches!(&e.vertices, VertexIds::Integer(v) if v == &[1, 2, 3]), "{:?}", e.vertices);
    assert_eq!((e.src.len(), e.bad_lines.len()), (3, 1));
}

#[test]
fn weighted_integer_lines_of_every_form_read_as_the_general_path_reads_them() {
    // Plain decimals take the direct path; exponents, signs, specials and bad weights take the general one.
    // The last two have 16 and 17 digits whose integer is not an exact double: dividing it would round twice.
    let input = "1,2,0.5\n3,4,-7\n5,6,1e3\n7,8,+2.5\n9,10,.25\n11,12,3.\n13,14,inf\n15,16,0.1234567890123456789\n\
                 17,18,x\n19,20,-0.0\n21,22,123456789012345\r\n23,24,1234567890123456\n25,26,1.5\n\
                 27,28,99180.10360366969\n29,30,821.72843949926903";
    let format = Format { id_type: Some(IdType::Integer), ..Format::default() };
    let e = parse(input.as_bytes(), &format, 1).unwrap();
    let expected: Vec<f64> = ["0.5", "-7", "1e3", "+2.5", ".25", "3.", "inf", "0.1234567890123456789"]
        .iter()
        .chain(&["-0.0", "123456789012345", "1234567890123456", "1.5", "99180.10360366969", "821.72843949926903"])
        .map(|w| w.parse().unwrap())
        .collect();
    let weights = e.weight.expect("a weight column");
    assert_eq!(
        weights.iter().map(|w| w.to_bits()).collect::<Vec<_>>(),
        expected.iter().map(|w| w.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(e.bad_lines.iter().map(|b| b.line).collect::<Vec<_>>(), [9]);
}

proptest::proptest! {
    /// The direct path's decimals are the values `str::parse` gives, to the bit, or left to the general path.
    #[test]
    fn short_decimals_are_correctly_rounded(
        negative: bool,
        whole in "[0-9]{1,12}",
        fraction in proptest::option::of("[0-9]{0,14}"),
    ) {
        let text = format!("{}{whole}{}", if negative { "-" } else { "" }, fraction.map(|f| format!(".{f}")).unwrap_or_default());
        let expected: f64 = text.parse().unwrap_or(f64::NAN);
        let bytes = format!("{text}\n");
        match short_decimal(bytes.as_bytes(), 0) {
            Some((value, end)) => {
                proptest::prop_assert_eq!(value.to_bits(), expected.to_bits(), "{}", text);
                proptest::prop_assert_eq!(end, text.len());
            }
            None => proptest::prop_assert!(text.trim_start_matches('-').replace('.', "").len() > 15 || text.ends_with('.')),
        }
    }
}
