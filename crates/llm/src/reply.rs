//! Reading the JSON a model returned.
//!
//! Grammar-constrained and `response_format` answers are bare JSON, but a server without JSON
//! mode often wraps it in a Markdown fence or a sentence. [`parse_reply`] takes the first complete
//! JSON object or array in the text (brackets inside strings are skipped) and deserializes it; a
//! failure is a typed [`ReplyError`] carrying the text, which the agents' validators turn into a
//! retry.

use serde::de::DeserializeOwned;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("the model's answer contains no JSON: {text:?}")]
    NoJson { text: String },
    #[error("the model's JSON does not have the expected shape ({message}): {json}")]
    Shape { message: String, json: String },
}

/// The first balanced `{…}` or `[…]` in `text`, if any.
pub fn extract_json(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut search_from = 0;
    while let Some(offset) = text[search_from..].find(['{', '[']) {
        let start = search_from + offset;
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        for (i, &b) in bytes.iter().enumerate().skip(start) {
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        let candidate = &text[start..=i];
                        if serde_json::from_str::<serde_json::Value>(candidate).is_ok() {
                            return Some(candidate);
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
        search_from = start + 1;
    }
    None
}

/// Deserializes the first JSON value in a model's answer.
pub fn parse_reply<T: DeserializeOwned>(text: &str) -> Result<T, ReplyError> {
    let json = extract_json(text).ok_or_else(|| ReplyError::NoJson {
        text: text.chars().take(300).collect(),
    })?;
    serde_json::from_str(json).map_err(|e| ReplyError::Shape {
        message: e.to_string(),
        json: json.chars().take(300).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Pick {
        value: String,
    }

    #[test]
    fn bare_fenced_and_chatty_answers() {
        for text in [
            r#"{"value": "Tom Hanks"}"#,
            "```json\n{\"value\": \"Tom Hanks\"}\n```",
            "Sure! The answer is {\"value\": \"Tom Hanks\"} as requested.",
            "{not json} then {\"value\": \"Tom Hanks\"}",
        ] {
            assert_eq!(
                parse_reply::<Pick>(text),
                Ok(Pick {
                    value: "Tom Hanks".into()
                }),
                "{text}"
            );
        }
    }

    #[test]
    fn brackets_and_quotes_inside_strings() {
        let text = r#"{"value": "a } strange [ \" label"}"#;
        assert_eq!(
            parse_reply::<Pick>(text).map(|p| p.value),
            Ok("a } strange [ \" label".into())
        );
    }

    /// Hostile text never panics (byte slicing stays on character boundaries) and whatever is
    /// extracted is valid JSON.
    #[test]
    fn random_text_never_panics() {
        let alphabet: Vec<char> = "{}[]\"\\:,ab 1é😀\n".chars().collect();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..20_000 {
            let len = (state % 24) as usize;
            let text: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            if let Some(json) = extract_json(&text) {
                assert!(serde_json::from_str::<serde_json::Value>(json).is_ok(), "{text:?}");
            }
            let _ = parse_reply::<serde_json::Value>(&text);
        }
    }

    #[test]
    fn typed_errors() {
        assert!(matches!(
            parse_reply::<Pick>("I don't know"),
            Err(ReplyError::NoJson { .. })
        ));
        assert!(matches!(
            parse_reply::<Pick>("{\"value\": 3"),
            Err(ReplyError::NoJson { .. })
        ));
        assert!(matches!(
            parse_reply::<Pick>("{\"other\": 3}"),
            Err(ReplyError::Shape { .. })
        ));
        assert!(matches!(parse_reply::<Pick>("]]]}}}"), Err(ReplyError::NoJson { .. })));
    }
}
