//! A whole Bolt conversation from arbitrary bytes: version negotiation, de-chunking, decoding, and the session
//! state machine running real queries against an in-memory database. Nothing may panic, and every response must
//! be well-formed chunks of valid PackStream.

#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use plexus_server::auth::Auth;
use plexus_server::bolt::connection::{choose_version, take_message};
use plexus_server::bolt::session::{Control, Session};
use plexus_server::packstream::decode;
use plexus_server::service::{Limits, Service};

fuzz_target!(|data: &[u8]| {
    if data.len() < 16 {
        return;
    }
    let proposals: [u8; 16] = data[..16].try_into().unwrap();
    let Some(version) = choose_version(&proposals) else { return };
    let limits = Limits { query_timeout: Some(std::time::Duration::from_millis(200)), max_result_bytes: Some(1 << 20) };
    let service = Arc::new(Service::new(plexus::Database::in_memory(), Auth::disabled(), limits));
    let mut session = Session::new(service, version, "127.0.0.1:7687".into(), 1);
    let mut inbuf = data[16..].to_vec();
    let mut out = Vec::new();
    while let Ok(Some(message)) = take_message(&mut inbuf, 1 << 20) {
        let Ok(value) = decode(&message) else { break };
        out.clear();
        let control = session.handle(value, &mut out);
        let mut responses = out.clone();
        while let Some(m) = take_message(&mut responses, usize::MAX).expect("responses are framed") {
            decode(&m).expect("responses are valid PackStream");
        }
        if control == Control::Close {
            break;
        }
    }
});
