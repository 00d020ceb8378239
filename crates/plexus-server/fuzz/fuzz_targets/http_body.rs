//! An HTTP request body: every body parser of the HTTP listener (Query API requests with their parameters, new
//! nodes, property updates, relationships, edge batches) in both JSON dialects, and the value conversion on its
//! own. Parsers must answer with a value or an error, never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use plexus_server::http::json::{
    decode_value, parse_edge_batch, parse_new_node, parse_new_relationship, parse_property_update,
    parse_query_request, Format,
};

fuzz_target!(|data: &[u8]| {
    for format in [Format::Plain, Format::Typed] {
        let _ = parse_query_request(data, format);
        let _ = parse_new_node(data, format);
        let _ = parse_property_update(data, format);
        let _ = parse_new_relationship(data, format);
        let _ = parse_edge_batch(data, format, true);
        let _ = parse_edge_batch(data, format, false);
        if let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) {
            if let Ok(value) = decode_value(&json, format) {
                // Whatever decodes either is storable or is refused with a reason.
                let _ = value.to_stored();
            }
        }
    }
});
