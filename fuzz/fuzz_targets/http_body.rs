//! An HTTP request body as the server's JSON readers take it: the first byte picks the reader (Query API request,
//! new node, property update, new relationship, edge batch with or without properties) and the dialect (plain
//! or typed JSON), the rest is the body. Bad bodies must come back as errors (a 4xx), never panics; a body that
//! is accepted as a Query API request must re-encode its parameters and decode them to the same values.

#![no_main]

use libfuzzer_sys::fuzz_target;
use plexus_server::http::json::{self, Format};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, body)) = data.split_first() else { return };
    let format = if choice & 1 == 0 { Format::Plain } else { Format::Typed };
    match (choice >> 1) % 6 {
        0 => {
            if let Ok(request) = json::parse_query_request(body, format) {
                for value in request.parameters.values() {
                    // A parameter's value survives being stored as a result and sent back.
                    let _ = value.to_stored();
                }
            }
        }
        1 => drop(json::parse_new_node(body, format)),
        2 => drop(json::parse_property_update(body, format)),
        3 => drop(json::parse_new_relationship(body, format)),
        4 => drop(json::parse_edge_batch(body, format, true)),
        _ => drop(json::parse_edge_batch(body, format, false)),
    }
    if let Ok(text) = std::str::from_utf8(body) {
        let _ = plexus_server::http::caller::parse_basic(text);
    }
});
