//! WebSocket client frames: `ws.rs` reads a text frame with `serde_json::from_str::<ClientMessage>`.
//! Must hold: no panic; the bytes and the text parse alike; a parsed message keeps its strings.
#![no_main]
use chatty_kg_server::protocol::ClientMessage;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let from_bytes = serde_json::from_slice::<ClientMessage>(data);
    // Text frames are UTF-8 (actix-ws checks); the server parses the text.
    if let Ok(text) = std::str::from_utf8(data) {
        let from_text = serde_json::from_str::<ClientMessage>(text);
        assert_eq!(from_bytes.as_ref().ok(), from_text.as_ref().ok(), "bytes and text disagree");
        if let Ok(message) = &from_text {
            // Strings come from the frame: none longer than the frame.
            let longest = match message {
                ClientMessage::Open { kg } => kg.as_ref().map_or(0, String::len),
                ClientMessage::Resume { session, .. } => session.len(),
                ClientMessage::Ask { question } => question.len(),
            };
            assert!(longest <= text.len());
        }
    }
    if let Err(e) = from_bytes {
        // The error frame's message is built from this.
        let _ = e.to_string();
    }
});
