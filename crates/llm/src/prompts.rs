//! The agents' prompt templates: data in `prompts/`, not string literals in code.
//!
//! The built-in templates are compiled into the binary (so it runs from anywhere); a directory
//! named in the configuration overrides them file by file. Templates are minijinja (Jinja2) with
//! strict undefined variables, and render a chat: lines `[system]`, `[user]` and `[assistant]`
//! alone on their line start a message of that role. Every error names the template file and,
//! when minijinja knows it, the line.

use crate::{Message, Role};
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Template file extension.
pub const EXTENSION: &str = "jinja";

/// The built-in templates, by name (file name without extension).
pub const BUILTIN: [(&str, &str); 7] = [
    ("classifier", include_str!("../../../prompts/classifier.jinja")),
    ("rephraser", include_str!("../../../prompts/rephraser.jinja")),
    ("qir", include_str!("../../../prompts/qir.jinja")),
    ("matching", include_str!("../../../prompts/matching.jinja")),
    ("path_search", include_str!("../../../prompts/path_search.jinja")),
    ("chat_verbalize", include_str!("../../../prompts/chat_verbalize.jinja")),
    ("chat_translate", include_str!("../../../prompts/chat_translate.jinja")),
];

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Template {
        file: String,
        line: Option<usize>,
        message: String,
    },
    #[error("prompt directory {dir}: {message}")]
    Directory { dir: PathBuf, message: String },
    #[error("no prompt template named {name:?} (known: {known})")]
    Unknown { name: String, known: String },
}

/// The loaded templates.
pub struct PromptLibrary {
    env: Environment<'static>,
    /// Template name → where it came from (a file, or "built-in …" for a compiled-in one).
    files: BTreeMap<String, String>,
}

impl std::fmt::Debug for PromptLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptLibrary").field("files", &self.files).finish()
    }
}

impl PromptLibrary {
    /// The built-in templates only.
    pub fn builtin() -> Result<Self, PromptError> {
        Self::load(None)
    }

    /// The built-in templates, each replaced by `<dir>/<name>.jinja` when that file exists.
    /// A `.jinja` file in `dir` that names no agent template is an error (most likely a typo).
    pub fn load(dir: Option<&Path>) -> Result<Self, PromptError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        let mut files = BTreeMap::new();
        let mut sources: BTreeMap<String, (String, String)> = BUILTIN
            .iter()
            .map(|(name, source)| {
                (
                    (*name).to_owned(),
                    (format!("prompts/{name}.{EXTENSION} (built-in)"), (*source).to_owned()),
                )
            })
            .collect();
        if let Some(dir) = dir {
            for (name, path) in template_files(dir)? {
                if !sources.contains_key(&name) {
                    return Err(PromptError::Directory {
                        dir: dir.into(),
                        message: format!("{} names no agent template (known: {})", path.display(), known()),
                    });
                }
                let source = std::fs::read_to_string(&path).map_err(|e| PromptError::Template {
                    file: path.display().to_string(),
                    line: None,
                    message: e.to_string(),
                })?;
                sources.insert(name, (path.display().to_string(), source));
            }
        }
        for (name, (file, source)) in sources {
            env.add_template_owned(name.clone(), source)
                .map_err(|e| template_error(&file, &e))?;
            files.insert(name, file);
        }
        Ok(Self { env, files })
    }

    /// Where each template came from.
    pub fn files(&self) -> &BTreeMap<String, String> {
        &self.files
    }

    /// Renders template `name` with `context` into chat messages.
    pub fn render(&self, name: &str, context: impl Serialize) -> Result<Vec<Message>, PromptError> {
        let file = self.files.get(name).ok_or_else(|| PromptError::Unknown {
            name: name.into(),
            known: known(),
        })?;
        let template = self.env.get_template(name).map_err(|e| template_error(file, &e))?;
        let text = template
            .render(minijinja::value::Serde(context))
            .map_err(|e| template_error(file, &e))?;
        split_messages(&text).map_err(|message| PromptError::Template {
            file: file.clone(),
            line: None,
            message,
        })
    }
}

fn known() -> String {
    BUILTIN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

fn template_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, PromptError> {
    let dir_error = |message: String| PromptError::Directory {
        dir: dir.into(),
        message,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| dir_error(e.to_string()))? {
        let path = entry.map_err(|e| dir_error(e.to_string()))?.path();
        if path.extension().is_some_and(|e| e == EXTENSION)
            && let Some(stem) = path.file_stem()
        {
            out.push((stem.to_string_lossy().into_owned(), path));
        }
    }
    out.sort();
    Ok(out)
}

fn template_error(file: &str, error: &minijinja::Error) -> PromptError {
    PromptError::Template {
        file: file.into(),
        line: error.line(),
        message: match error.detail() {
            Some(detail) => format!("{}: {detail}", error.kind()),
            None => error.kind().to_string(),
        },
    }
}

/// Splits rendered text at `[system]`/`[user]`/`[assistant]` lines.
fn split_messages(text: &str) -> Result<Vec<Message>, String> {
    let mut messages: Vec<Message> = Vec::new();
    let mut preamble = String::new();
    for line in text.lines() {
        let role = match line.trim() {
            "[system]" => Some(Role::System),
            "[user]" => Some(Role::User),
            "[assistant]" => Some(Role::Assistant),
            _ => None,
        };
        match (role, messages.last_mut()) {
            (Some(role), _) => messages.push(Message {
                role,
                content: String::new(),
            }),
            (None, Some(message)) => {
                message.content.push_str(line);
                message.content.push('\n');
            }
            (None, None) => preamble.push_str(line),
        }
    }
    if !preamble.trim().is_empty() {
        return Err(format!(
            "text before the first [system]/[user] line: {:?}",
            preamble.trim()
        ));
    }
    for message in &mut messages {
        message.content = message.content.trim().to_owned();
    }
    match messages.last() {
        None => Err("the template renders no [system]/[user] message".into()),
        Some(last) if last.role != Role::User => Err("the last message must be [user]".into()),
        Some(_) => Ok(messages),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_builtin_template_renders() {
        let prompts = PromptLibrary::builtin().unwrap();
        let history = json!([{"question": "Who directed Alien?", "answers": ["Ridley Scott"]}]);
        let contexts = [
            (
                "classifier",
                json!({"history": history, "question": "When was he born?"}),
            ),
            (
                "rephraser",
                json!({"history": history, "question": "When was he born?"}),
            ),
            ("qir", json!({"question": "Who directed Alien?", "feedback": null})),
            (
                "matching",
                json!({"question": "q", "mention": "alien", "candidates": ["Alien", "Aliens"], "feedback": null}),
            ),
            (
                "path_search",
                json!({"question": "q", "paths": ["Alien → directed by", "Alien → written by"], "feedback": null}),
            ),
            (
                "chat_verbalize",
                json!({"question": "q", "answers": ["Ridley Scott"], "kind": "list"}),
            ),
            ("chat_translate", json!({"question": "Qui a réalisé Alien ?"})),
        ];
        assert_eq!(contexts.len(), BUILTIN.len());
        for (name, context) in contexts {
            let messages = prompts.render(name, context).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(messages[0].role, Role::System, "{name}");
            assert!(
                !messages[0].content.is_empty() && !messages[0].content.contains("{{"),
                "{name}"
            );
            assert_eq!(messages.last().map(|m| m.role), Some(Role::User), "{name}");
        }
        let rephraser = prompts
            .render(
                "rephraser",
                json!({"history": history, "question": "When was he born?"}),
            )
            .unwrap();
        let last = &rephraser.last().unwrap().content;
        assert!(
            last.contains("Q1: Who directed Alien?\nA1: Ridley Scott")
                && last.ends_with("New question: When was he born?"),
            "{last}"
        );
    }

    #[test]
    fn a_missing_variable_names_the_file_and_line() {
        let prompts = PromptLibrary::builtin().unwrap();
        let error = prompts
            .render("matching", json!({"question": "q"}))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("prompts/matching.jinja (built-in):"), "{error}");
        assert!(error.contains("undefined"), "{error}");
    }

    #[test]
    fn a_directory_overrides_file_by_file_and_errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("classifier.jinja"),
            "[system]\nCustom.\n[user]\n{{ question }}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a template").unwrap();
        let prompts = PromptLibrary::load(Some(dir.path())).unwrap();
        let messages = prompts
            .render("classifier", json!({"question": "Who?", "history": []}))
            .unwrap();
        assert_eq!(messages, vec![Message::system("Custom."), Message::user("Who?")]);
        assert!(prompts.files()["classifier"].ends_with("classifier.jinja"));
        assert!(
            prompts.files()["qir"].contains("built-in"),
            "other templates stay built-in"
        );

        let bad = dir.path().join("qir.jinja");
        std::fs::write(&bad, "[system]\nok\n[user]\n{% if question %}\n{{ question }\n").unwrap();
        let error = PromptLibrary::load(Some(dir.path())).unwrap_err().to_string();
        assert!(error.starts_with(&format!("{}:5:", bad.display())), "{error}");

        std::fs::remove_file(&bad).unwrap();
        std::fs::write(dir.path().join("qri.jinja"), "[user]\nx").unwrap();
        let error = PromptLibrary::load(Some(dir.path())).unwrap_err().to_string();
        assert!(error.contains("qri.jinja names no agent template"), "{error}");
        assert!(PromptLibrary::load(Some(&dir.path().join("missing"))).is_err());
    }

    #[test]
    fn markers_are_required() {
        assert!(split_messages("hello\n[user]\nhi").is_err());
        assert!(split_messages("[system]\nonly a system prompt").is_err());
        assert!(split_messages("").is_err());
        let messages = split_messages("[system]\n a \n[user]\nb\n\nc\n").unwrap();
        assert_eq!(messages, vec![Message::system("a"), Message::user("b\n\nc")]);
    }
}
