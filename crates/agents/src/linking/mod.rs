//! Linking the question's words to the graph: the spans that are exactly vertex labels, values
//! written in the question, and names written in part ([`spotting`]). Choosing among the
//! candidates of one mention is the matching agent's (`agents/matching.rs`); a yes/no question's
//! second thing is looked for among the first one's neighbours ([`coherence`]); a class named
//! right after a mention types it ([`typed`]: a common word there is a name, and the vertex of
//! that class is the one meant).

pub(crate) mod asked;
pub(crate) mod coherence;
pub(crate) mod compounds;
pub mod link;
pub(crate) mod modifiers;
pub(crate) mod spotting;
pub(crate) mod typed;

use crate::linking::link::{EntityLink, LinkMethod};

/// The one linked mention, of two, written as a common noun (no capital, no digit, no quote)
/// while the other is written as a name, when neither was read as words already: "In which
/// *time zone* is Rome?", "the *video game* World of Warcraft". Where the two vertices never
/// meet, or no word but the mentions is left, the noun's words say the relation or the kind.
/// Where the noun is a vertex's exact label and the name only the most connected of the labels
/// that hold it, the name is the one read as words.
pub(crate) fn common_noun_link(entities: &[EntityLink]) -> Option<usize> {
    let linked: Vec<usize> = (0..entities.len()).filter(|&i| entities[i].iri.is_some()).collect();
    if linked.len() != 2 || entities.iter().any(|l| l.read_as_words) {
        return None;
    }
    let nouns: Vec<usize> = linked
        .iter()
        .copied()
        .filter(|&i| asked::written_as_common_noun(&entities[i].mention))
        .collect();
    match nouns.as_slice() {
        // "What version of *kicad* is in *Debian*?": no label is "Debian", only a guess among
        // the 149 labels that hold it (the most connected), where the noun is a vertex's own
        // label: the name's words are what is read, not the noun's.
        [i] if entities[*i].method == LinkMethod::ExactLabel
            && let Some(&name) = linked.iter().find(|&&j| j != *i)
            && entities[name].method == LinkMethod::MostConnected =>
        {
            Some(name)
        }
        [i] if !matches!(
            entities[*i].method,
            LinkMethod::Referent | LinkMethod::Clarified | LinkMethod::Literal | LinkMethod::Modifier
        ) =>
        {
            Some(*i)
        }
        _ => None,
    }
}

/// Where the words `mention` (normalised, as `words` are) first stand together in `words`, as
/// `start..end`; `None` when they do not, or `mention` is empty.
pub(crate) fn find_span(words: &[String], mention: &[String]) -> Option<(usize, usize)> {
    if mention.is_empty() || mention.len() > words.len() {
        return None;
    }
    words
        .windows(mention.len())
        .position(|w| w == mention)
        .map(|start| (start, start + mention.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatty_kg_graph::text::normalize_tokens;

    fn words(text: &str) -> Vec<String> {
        normalize_tokens(text)
    }

    fn link(mention: &str, method: LinkMethod) -> EntityLink {
        EntityLink {
            mention: mention.to_owned(),
            iri: Some(format!("http://example.org/{mention}")),
            label: Some(mention.to_owned()),
            method,
            candidates: 1,
            top_candidates: Vec::new(),
            homonyms: Vec::new(),
            homonym_retried: false,
            read_as_words: false,
        }
    }

    #[test]
    fn the_weaker_of_a_noun_and_a_name_is_read_as_words() {
        // "In which time zone is Rome?": the common noun says the relation.
        let zone = [
            link("time zone", LinkMethod::ExactLabel),
            link("Rome", LinkMethod::ExactLabel),
        ];
        assert_eq!(common_noun_link(&zone), Some(0));
        // "What version of kicad is in Debian?": kicad is a label, "Debian" only part of many.
        let kicad = [
            link("Debian", LinkMethod::MostConnected),
            link("kicad", LinkMethod::ExactLabel),
        ];
        assert_eq!(common_noun_link(&kicad), Some(0));
        // A noun that is no label of its own stays the one read.
        let guessed = [
            link("Debian", LinkMethod::MostConnected),
            link("kicad", LinkMethod::MostConnected),
        ];
        assert_eq!(common_noun_link(&guessed), Some(1));
    }

    #[test]
    fn a_mention_is_found_by_its_words() {
        let q = words("Who maintains the dash source package?");
        assert_eq!(find_span(&q, &words("dash")), Some((3, 4)));
        assert_eq!(find_span(&q, &words("source package")), Some((4, 6)));
        assert_eq!(find_span(&q, &words("zsh")), None);
        assert_eq!(find_span(&q, &[]), None);
    }
}
