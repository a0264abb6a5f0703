//! REST inputs: the body of `POST /api/sessions`, the body of `POST /api/sessions/{id}/ask`, and
//! the query string of `GET /api/sessions/{id}` (`?from&limit`), through the parsers the
//! handlers use. The first byte picks which; the rest is the input.
//! Must hold: no panic; an error is a `malformed_message` (400) with a printable message; a
//! whitespace-only session body is the default KG.
#![no_main]
use chatty_kg_server::rest::{parse_ask, parse_create_session, parse_page};
use chatty_kg_server::ServerError;
use libfuzzer_sys::fuzz_target;

fn check_error(e: &ServerError) {
    assert_eq!(e.kind(), "malformed_message", "{e}");
    let _ = e.to_string();
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, input)) = data.split_first() else {
        return;
    };
    match which % 3 {
        0 => match parse_create_session(input) {
            Ok(kg) => {
                if input.iter().all(u8::is_ascii_whitespace) {
                    assert_eq!(kg, None);
                }
            }
            Err(e) => check_error(&e),
        },
        1 => match parse_ask(input) {
            Ok(question) => assert!(question.len() <= input.len()),
            Err(e) => check_error(&e),
        },
        _ => {
            if let Ok(query) = std::str::from_utf8(input) {
                if let Err(e) = parse_page(query) {
                    check_error(&e);
                }
            }
        }
    }
});
