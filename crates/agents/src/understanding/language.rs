//! The language a question is written in, as the graph's language tags write it (ISO 639-1,
//! "de"), from what the detector (whatlang) reports (ISO 639-3, `Lang::Deu`). Only the languages
//! both know: a detected language with no two-letter code names no label.

use whatlang::Lang;

/// ISO 639-1 code of a language whatlang detects, where it has one.
pub fn iso_639_1(lang: Lang) -> Option<&'static str> {
    Some(match lang {
        Lang::Eng => "en",
        Lang::Deu => "de",
        Lang::Fra => "fr",
        Lang::Spa => "es",
        Lang::Ita => "it",
        Lang::Por => "pt",
        Lang::Nld => "nl",
        Lang::Rus => "ru",
        Lang::Pol => "pl",
        Lang::Swe => "sv",
        Lang::Dan => "da",
        Lang::Nob => "nb",
        Lang::Fin => "fi",
        Lang::Ces => "cs",
        Lang::Slk => "sk",
        Lang::Slv => "sl",
        Lang::Hrv => "hr",
        Lang::Srp => "sr",
        Lang::Bul => "bg",
        Lang::Ukr => "uk",
        Lang::Bel => "be",
        Lang::Ron => "ro",
        Lang::Hun => "hu",
        Lang::Tur => "tr",
        Lang::Ell => "el",
        Lang::Heb => "he",
        Lang::Ara => "ar",
        Lang::Pes => "fa",
        Lang::Hin => "hi",
        Lang::Ben => "bn",
        Lang::Urd => "ur",
        Lang::Jpn => "ja",
        Lang::Cmn => "zh",
        Lang::Kor => "ko",
        Lang::Vie => "vi",
        Lang::Tha => "th",
        Lang::Ind => "id",
        Lang::Cat => "ca",
        Lang::Epo => "eo",
        Lang::Lit => "lt",
        Lang::Lav => "lv",
        Lang::Est => "et",
        Lang::Afr => "af",
        Lang::Kat => "ka",
        Lang::Hye => "hy",
        Lang::Aze => "az",
        Lang::Tgl => "tl",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_in_german_and_english_are_told_apart() {
        let detect = |q: &str| {
            whatlang::detect(q)
                .filter(whatlang::Info::is_reliable)
                .and_then(|i| iso_639_1(i.lang()))
        };
        assert_eq!(
            detect("Welche Pakete aus dem Bereich Spiele hängen von der Bibliothek libc6 ab?"),
            Some("de")
        );
        assert_eq!(
            detect("Which packages of the games section depend on the library libc6?"),
            Some("en")
        );
    }
}
