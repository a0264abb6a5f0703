//! English words, as every stage reads them: the question's tokenizer, the singular of a noun,
//! the function words, and every word list the stages use, each with what it is for. Plain
//! functions of text: this module imports nothing of the crate, so any stage may use it.
//!
//! The lists are closed classes of English (articles, pronouns, prepositions, question words,
//! copulas, months, cardinals) and the few open-class words that mark a form ("which of them",
//! "list"), never the names of one graph's relations or classes.

use chatty_kg_graph::text::normalize_tokens;

// The question as words.

/// One normalised word of the question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Lower-case ASCII (`normalize_tokens`).
    pub text: String,
    /// Written with a capital letter (and not the question's first word).
    pub capitalized: bool,
    /// A possessive `'s` follows it.
    pub possessive: bool,
}

/// Whether the word at byte `at` of `question` opens a sentence after the first: the text before
/// it ends with "?" or "!", or with "." after a lower-case word of two letters or more (not an
/// initial, "J. R. R. Tolkien", nor a title, "Dr."). Such a word has its capital whatever it is,
/// like the question's first ("… versions? *Newest* first please.").
pub(crate) fn starts_a_sentence(question: &str, at: usize) -> bool {
    let before = question[..at].trim_end();
    if before.ends_with(['?', '!']) {
        return true;
    }
    let Some(body) = before.strip_suffix('.') else {
        return false;
    };
    let last = body.rsplit(char::is_whitespace).next().unwrap_or_default();
    last.chars().count() >= 2 && last.chars().all(char::is_alphabetic) && last.chars().all(char::is_lowercase)
}

/// The question as words.
pub fn words(question: &str) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    for raw in question.split_whitespace() {
        // `raw` is a slice of `question`: its offset is where it starts.
        let initial = starts_a_sentence(question, raw.as_ptr() as usize - question.as_ptr() as usize);
        let raw = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}');
        let (body, possessive) = match raw
            .strip_suffix("'s")
            .or_else(|| raw.strip_suffix("\u{2019}s"))
            .or_else(|| raw.strip_suffix("s'"))
        {
            Some(body) if raw.ends_with("s'") => (format!("{body}s"), true),
            Some(body) => (body.to_owned(), true),
            None => (raw.to_owned(), false),
        };
        if body.is_empty() {
            // A detached "'s" ("X 's couple").
            if possessive && let Some(last) = out.last_mut() {
                last.possessive = true;
            }
            continue;
        }
        let capitalized = !out.is_empty() && !initial && body.chars().next().is_some_and(char::is_uppercase);
        let tokens = normalize_tokens(&body);
        let n = tokens.len();
        for (i, text) in tokens.into_iter().enumerate() {
            out.push(Word {
                text,
                capitalized,
                possessive: possessive && i + 1 == n,
            });
        }
    }
    out
}

// Nouns.

/// The singular of an English noun, by the regular rules and the few irregular plurals that name
/// kinds of things often ("people", "children").
pub fn singular(word: &str) -> String {
    const IRREGULAR: &[(&str, &str)] = &[
        ("people", "person"),
        ("persons", "person"),
        ("men", "man"),
        ("women", "woman"),
        ("children", "child"),
        ("mice", "mouse"),
        ("geese", "goose"),
        ("teeth", "tooth"),
        ("feet", "foot"),
        ("series", "series"),
        ("species", "species"),
    ];
    if let Some((_, s)) = IRREGULAR.iter().find(|(p, _)| *p == word) {
        return (*s).to_owned();
    }
    let n = word.len();
    if n > 4 && word.ends_with("ies") {
        format!("{}y", &word[..n - 3])
    } else if n > 4
        && ["ches", "shes", "sses", "xes", "zzes"]
            .iter()
            .any(|e| word.ends_with(e))
    {
        word[..n - 2].to_owned()
    } else if n > 3 && word.ends_with('s') && !["ss", "us", "is"].iter().any(|e| word.ends_with(e)) {
        word[..n - 1].to_owned()
    } else {
        word.to_owned()
    }
}

// Closed classes of English.

/// Words that are never a whole entity nor part of the relation phrase.
pub(crate) const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was",
    "were", "be", "been", "do", "does", "did", "can", "could", "you", "me", "i", "give", "tell", "list", "name", "of",
    "in", "on", "for", "to", "by", "with", "and", "or", "that", "this", "it", "its", "as", "at", "from", "some", "any",
    "few", "please", "many", "much", "has", "have", "had", "all", "every", "each", "but", "after", "before",
];

/// Whether `word` is one of the [`FUNCTION_WORDS`].
pub(crate) fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// Two-letter words of English that are no names (pronouns, particles): every other word of two
/// letters or more may be a vertex's label ("ed", "vi", "UK").
pub(crate) const SHORT_WORDS: &[&str] = &["he", "we", "us", "my", "so", "no", "if", "up", "am", "ok"];

/// Words that may open a label ("The Grudge") though they are function words.
pub(crate) const ARTICLES: &[&str] = &["the", "a", "an"];

/// The question words: a follow-up that opens with one asks anew.
pub(crate) const QUESTION_WORDS: &[&str] = &["what", "which", "who", "whom", "whose", "when", "where", "why", "how"];

/// The words other than "when" that ask for the answer themselves: question words and the
/// imperatives that ask for things.
pub(crate) const WH_WORDS: &[&str] = &[
    "what", "which", "who", "whom", "whose", "where", "how", "list", "name", "give", "show",
];

/// Auxiliary verbs that open a yes/no question.
pub(crate) const YES_NO_OPENERS: &[&str] = &[
    "is", "are", "was", "were", "am", "do", "does", "did", "has", "have", "had", "can", "could", "will", "would",
    "should", "shall", "may", "might", "isn", "aren", "wasn", "weren", "doesn", "didn", "hasn", "haven",
];

/// Forms of "to be" that make a question say what something *was* at a time.
pub(crate) const COPULAS: &[&str] = &["is", "are", "was", "were", "been", "be"];

/// Verbs and auxiliaries after which "there" is existential ("is there", "are there any").
pub(crate) const BE: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "being", "isn't", "aren't", "wasn't", "weren't",
];

/// Words after a copula that make it no state: "were *there*" asks whether something happened.
pub(crate) const EXISTENTIAL: &[&str] = &["there"];

/// Words that sit between the attribute and the value and name nothing themselves.
pub(crate) const LINKING: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "with", "of", "a", "an", "the", "that",
    "which", "who", "than", "and", "do", "does", "did",
];

/// Words whose object a mention can be ("the author *of* X").
pub(crate) const PREPOSITIONS: &[&str] = &["of", "by", "in", "with", "for", "from", "on", "at", "about", "to"];

/// Prepositions with which a class word after a mention names a relation ("in the X block").
pub(crate) const RELATION_PREPOSITIONS: &[&str] = &["in", "into", "to", "of", "from", "on", "at", "within"];

/// Words that may open an ellipsis before what it names ("and *in* 5.2?", "And *for* the Greek
/// small letter beta?", "And *of* mksh?"): the earlier question keeps its own.
pub(crate) const ELLIPSIS_PREPOSITIONS: &[&str] = &["in", "with", "for", "of", "from", "about", "on", "at", "by", "to"];

/// Cardinal numbers written as words, for "the *three* largest".
pub(crate) const CARDINALS: &[&str] = &[
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "fifteen", "twenty",
];

/// English month names, for the days a question writes.
pub(crate) const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

// Names and titles.

/// Ordinals as words, suffixed digits and Roman numerals, by their digits: "Rocky *II*" and
/// "Rocky *2*" name one sequel.
pub(crate) const ORDINAL_DIGITS: &[(&str, &[&str])] = &[
    ("1", &["first", "1st", "i"]),
    ("2", &["second", "2nd", "ii"]),
    ("3", &["third", "3rd", "iii"]),
    ("4", &["fourth", "4th", "iv"]),
    ("5", &["fifth", "5th", "v"]),
    ("6", &["sixth", "6th", "vi"]),
    ("7", &["seventh", "7th", "vii"]),
    ("8", &["eighth", "8th", "viii"]),
    ("9", &["ninth", "9th", "ix"]),
    ("10", &["tenth", "10th", "x"]),
];

/// Titles before a name that are no part of it ("President Kennedy", "Dr. Who" aside).
pub(crate) const TITLES: &[&str] = &[
    "president",
    "king",
    "queen",
    "prince",
    "princess",
    "pope",
    "saint",
    "st",
    "sir",
    "dame",
    "lord",
    "lady",
    "dr",
    "mr",
    "mrs",
    "ms",
    "professor",
    "prof",
    "general",
    "senator",
    "emperor",
    "empress",
    "chancellor",
    "governor",
];

/// Words that join the capitalised words of one title or name ("The Time *of the* Hero", "Bank
/// *of* America", "Charles *de* Gaulle"); a relation's preposition does not ("Lima *in* Peru"),
/// nor "and", which joins two names more often than it is inside one.
pub(crate) const TITLE_JOINERS: &[&str] = &[
    "of", "the", "de", "du", "des", "la", "le", "von", "van", "der", "den", "del", "da", "di",
];

/// A title written before a name, never part of it ("President", "Pope", "Dr").
pub(crate) fn is_title(word: &str) -> bool {
    TITLES.contains(&word)
}

// Words that mark what is asked.

/// Question words and imperatives that open a question asking for values, not for yes or no.
pub(crate) const VALUE_OPENERS: &[&str] = &[
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "list", "name", "give", "tell", "show",
    "find",
];

/// Ordinals before a superlative ("the second highest"), as the rows skipped.
pub(crate) const SUPERLATIVE_ORDINALS: &[(&str, usize)] = &[
    ("second", 1),
    ("third", 2),
    ("fourth", 3),
    ("fifth", 4),
    ("2nd", 1),
    ("3rd", 2),
    ("4th", 3),
    ("5th", 4),
];

/// Words after which a class names the kind of answer wanted.
pub(crate) const ASKING: &[&str] = &["which", "what", "many", "all", "every", "each"];

/// Words after which "the" + class names the kind of answer wanted ("list the cities").
pub(crate) const LISTING: &[&str] = &["list", "name", "show", "all", "give"];

/// The only words that may stand beside a class (and a superlative) in a question about the
/// class alone ("how many countries are there in the graph", "list all the cities", "who is the
/// oldest writer"). Pronouns, other prepositions and any other word mean something else must be
/// found ("which actors are in it", "which albums are by the who").
pub(crate) const ABOUT_THE_CLASS: &[&str] = &[
    "how", "many", "much", "what", "which", "who", "is", "are", "was", "were", "the", "a", "an", "all", "every",
    "list", "name", "give", "show", "tell", "me", "us", "there", "exist", "exists", "total", "in", "graph", "known",
    "of", "number", "second", "third", "fourth", "fifth",
];

/// Verbs that open a request ("*Show* me all museums in London", "*Find* the tenants of X"),
/// as "give", "list" and "tell" do: no relation.
pub(crate) const REQUESTS: &[&str] = &["show", "find"];

/// Question words and fillers that are never relations.
pub(crate) const NOT_RELATIONS: &[&str] = &[
    "whose", "there", "their", "they", "them", "he", "she", "his", "her", "its", "all", "one", "ones", "which", "what",
    "who", "whom", "when", "where", "why", "how", "s",
];

/// Words that say two hops go through the same relation.
pub(crate) const SHARING_WORDS: &[&str] = &[
    "share", "shares", "shared", "sharing", "same", "also", "both", "co", "together",
];

// Words of a follow-up.

/// Ordinals that pick one answer of a list the user was shown ("the *second* one"), as its
/// position from 1; 0 is the last.
pub(crate) const LIST_POSITIONS: &[(&str, usize)] = &[
    ("first", 1),
    ("second", 2),
    ("third", 3),
    ("fourth", 4),
    ("fifth", 5),
    ("sixth", 6),
    ("seventh", 7),
    ("eighth", 8),
    ("ninth", 9),
    ("tenth", 10),
    ("last", 0),
];

/// Words before a lone "this"/"that" that make it a pronoun ("is that", "about this").
pub(crate) const BEFORE_PRONOMINAL: &[&str] = &[
    "is", "was", "are", "were", "did", "does", "do", "has", "have", "had", "about", "of", "in", "by", "for", "from",
    "with", "on", "at", "to", "direct", "directed", "write", "wrote", "written", "make", "made",
];

/// Words that follow "her" as an object rather than as a possessive.
pub(crate) const AFTER_OBJECT: &[&str] = &[
    "in", "on", "at", "by", "for", "from", "with", "to", "of", "and", "or", "as", "than", "about", "into", "born",
    "is", "was", "who", "that", "which", "win", "won", "play", "played", "appear", "appeared", "star", "starred",
    "direct", "directed", "write", "wrote", "marry", "married", "also", "too", "first", "last",
];

/// Words before "of them" that make it the whole list ("which of them", "how many of them").
pub(crate) const QUANTIFIERS: &[&str] = &[
    "which", "many", "any", "all", "each", "some", "none", "one", "two", "three", "most", "both", "few", "who", "what",
    "every", "either", "neither",
];

/// Words after a noun phrase that say which one it is ("the films *directed by* X").
pub(crate) const QUALIFIERS: &[&str] = &[
    "of", "by", "with", "from", "in", "for", "starring", "that", "which", "who", "whom", "whose", "about", "on", "at",
    "named", "called", "titled",
];

/// Nouns a demonstrative commonly carries whatever the graph ("that city", "this one"); the
/// candidates' own class words and asked nouns count too ([`detect_with`]).
pub const GENERIC_NOUNS: &[&str] = &[
    "one",
    "person",
    "people",
    "man",
    "woman",
    "guy",
    "place",
    "city",
    "town",
    "village",
    "country",
    "state",
    "region",
    "film",
    "movie",
    "book",
    "thing",
    "company",
    "team",
    "club",
    "band",
    "album",
    "song",
    "show",
    "series",
    "paper",
    "article",
    "publication",
    "work",
    "event",
    "author",
    "actor",
    "actress",
    "director",
    "writer",
    "player",
    "artist",
    "singer",
    "group",
    "organization",
    "organisation",
    "university",
    "school",
    "language",
    "genre",
    "game",
    "building",
    "river",
    "mountain",
    "island",
    "championship",
    "tournament",
    "award",
    "journal",
    "conference",
    "institution",
    "record",
];

/// Class words of persons (a class label containing one, or a "who" question, makes a person).
pub const PERSON_WORDS: &[&str] = &[
    "person",
    "people",
    "human",
    "man",
    "woman",
    "guy",
    "actor",
    "actress",
    "writer",
    "author",
    "director",
    "singer",
    "musician",
    "artist",
    "player",
    "politician",
    "scientist",
    "athlete",
    "painter",
    "poet",
    "composer",
    "producer",
    "researcher",
    "philosopher",
    "officeholder",
    "journalist",
    "creator",
    "screenwriter",
    "skater",
    "footballer",
    "president",
    "king",
    "queen",
    "child",
    "son",
    "daughter",
    "wife",
    "husband",
    "spouse",
    "member",
];

/// Class words of places.
pub const PLACE_WORDS: &[&str] = &[
    "place",
    "location",
    "city",
    "town",
    "village",
    "country",
    "state",
    "region",
    "province",
    "county",
    "municipality",
    "settlement",
    "continent",
    "island",
    "area",
    "capital",
    "nation",
    "district",
    "territory",
];

// Comparing words.

/// A word of `label` and `word` differ only after a common stem of four letters or more that
/// leaves at most [`SUFFIX`] letters of the shorter ("published" / "publisher", "written" /
/// "writer", "successor" / "succeeded"; not "discipline" / "discovered"), or are equal when
/// shorter, or one ends a compound made of the other ("screenwriter" / "written by",
/// "birthplace" / "place").
pub(crate) fn shares_stem(label: &str, word: &str) -> bool {
    let stem = |w: &str| w.chars().take(4).collect::<String>();
    let common = |a: &str, b: &str| {
        let shared = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        shared >= 4 && shared + SUFFIX >= a.chars().count().min(b.chars().count())
    };
    chatty_kg_graph::text::normalize_tokens(label).iter().any(|l| {
        if l.len() >= 4 && word.len() >= 4 {
            common(l, word)
                || (word.len() > l.len().min(6) + 2 && word[2..].contains(&stem(l)))
                || (l.len() > word.len().min(6) + 2 && l[2..].contains(&stem(word)))
        } else {
            l == word
        }
    })
}

/// Letters after a shared stem that an ending may take ("-ed", "-er", "-ing", "-ion", "-ions").
pub(crate) const SUFFIX: usize = 4;

/// Every content word of `mention` is a whole word of `label` ("Kerouac" in "Jack Kerouac";
/// "ISO" is not in "Left-to-right isolate").
pub(crate) fn holds_every_word(mention: &str, label: &str) -> bool {
    if same_letters(mention, label) {
        return true;
    }
    let label = normalize_tokens(label);
    let words: Vec<String> = normalize_tokens(mention)
        .into_iter()
        .filter(|w| !is_function_word(w))
        .collect();
    !words.is_empty() && words.iter().all(|w| label.contains(w))
}

/// The mention is the label as a text that lost its letters outside ASCII writes it ("Sylvain
/// Lvi" for "Sylvain Lévi", "Lake Uniamsi" for "Lake Uniamési": an encoding that dropped them):
/// an exact match of the label, as written there.
pub(crate) fn lost_letters_of(mention: &str, label: &str) -> bool {
    // Letters lost, never a whole word ("Alibaba" is not "Alibaba 阿里巴巴").
    !label.is_ascii()
        && label
            .split_whitespace()
            .all(|w| w.chars().any(|c| c.is_ascii_alphanumeric()))
        && {
            let ascii: String = label.chars().filter(char::is_ascii).collect();
            let words = normalize_tokens(mention);
            !words.is_empty() && words == normalize_tokens(&ascii)
        }
}

/// The mention and the label spell the same words, separators aside: a name taken from an IRI
/// often runs its words together ("jiaxinpan" for "Jiaxin Pan").
pub(crate) fn same_letters(mention: &str, label: &str) -> bool {
    let mention = normalize_tokens(mention).concat();
    !mention.is_empty() && mention == normalize_tokens(label).concat()
}
