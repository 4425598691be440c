//! Words that carry no meaning of their own in a language ("how", "did", "the", "my"): a
//! question typed as it is said ("when did Caroline go to the support group?") would
//! otherwise find only the entries holding every one of them. A search does not require
//! them ([`crate::analysis::QueryParts::meaningful`]); quoted words and phrases keep them.
//!
//! The words are listed as the index sees them (lowercased, accents folded: "über" is
//! `uber`). English, German, French and Spanish have kb's own lists of function words
//! (articles, pronouns, auxiliaries, prepositions, conjunctions, question words); the other
//! languages of [`SearchLanguage`] use tantivy's lists as they are (a listed word with an
//! accent is not recognised once folded).

use std::collections::HashSet;
use std::sync::OnceLock;

use tantivy::tokenizer::{Language, RawTokenizer, StopWordFilter, TextAnalyzer, TokenStream};

use crate::analysis::SearchLanguage;

/// English function words.
const ENGLISH: &str = "a about above after again against all am an and any are as at be because been before being \
    below between both but by can could did do does doing done down during each either few for from further get \
    gets got had has have having he her here hers herself him himself his how i if in into is it its itself just \
    me might more most must my myself no nor not now of off on once only or other our ours ourselves out over own \
    same shall she should so some such than that the their theirs them themselves then there these they this \
    those through to too under until up upon us very was we were what whats when where whether which while who \
    whom whose why will with within without would you your yours yourself yourselves s t d ll m re ve";

/// German function words.
const GERMAN: &str = "aber alle allem allen aller alles als also am an ander andere anderem anderen anderer \
    anderes auch auf aus bei bin bis bist da damit dann das dass dein deine deinem deinen deiner dem den denn der \
    des dich die dies diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer eines er \
    es etwas euch euer eure fur gegen gewesen hab habe haben hat hatte hatten hier hin hinter ich ihm ihn ihnen \
    ihr ihre ihrem ihren ihrer ihres im in indem ins ist jede jedem jeden jeder jedes jene jetzt kann konnen \
    konnte man manche mein meine meinem meinen meiner mich mir mit muss musste nach nicht nichts noch nun nur ob \
    oder ohne sehr sein seine seinem seinen seiner sich sie sind so solche soll sollte sondern sonst uber um und \
    uns unser unsere unter vom von vor war waren warst warum was weil welche welchem welchen welcher welches wann \
    wenn wer werde werden wie wieder will wir wird wirst wo wollen wollte wurde wurden zu zum zur zwar zwischen";

/// French function words.
const FRENCH: &str = "a ai aie aient as au aux avais avait avec avez avons ayant c ce ceci cela celle celles \
    celui ces cet cette ceux comme comment d dans de des donc dont du elle elles en es est et etaient etais etait \
    ete etes etre eu eux fait j je l la le les leur leurs lui m ma mais me meme mes moi mon n ne ni nos notre \
    nous on ont ou par pas peut pour pourquoi qu quand que quel quelle quelles quels qui s sa sans se ses si son \
    sont sur t ta te tes toi ton tu un une vos votre vous y";

/// Spanish function words.
const SPANISH: &str = "a al algo algunas algunos ante antes como con contra cual cuales cuando cuanto de del \
    desde donde durante e el ella ellas ellos en entre era eran es esa esas ese eso esos esta estaba estado estan \
    estar estas este esto estos fue fueron fui ha han has hay he la las le les lo los me mi mis mucho muy nada ni \
    no nos nosotros o os otra otro para pero poco por porque que quien quienes se sea sin sobre son su sus tambien \
    te tiene tienen todo todos tu tus un una uno unos y ya yo";

/// The word lists kb writes itself, by language.
const OWN: &[(Language, &str)] = &[
    (Language::English, ENGLISH),
    (Language::German, GERMAN),
    (Language::French, FRENCH),
    (Language::Spanish, SPANISH),
];

/// Whether `word` (analysed: lowercased and folded) carries no meaning of its own in
/// `language`.
pub fn is_stop_word(word: &str, language: SearchLanguage) -> bool {
    match OWN.iter().find(|(l, _)| *l == language.tantivy()) {
        Some(&(l, _)) => own_list(l).contains(word),
        None => in_tantivy_list(word, language.tantivy()),
    }
}

/// kb's list for `language` (one of [`OWN`]), read once.
fn own_list(language: Language) -> &'static HashSet<&'static str> {
    static LISTS: OnceLock<Vec<(Language, HashSet<&'static str>)>> = OnceLock::new();
    let lists = LISTS.get_or_init(|| {
        OWN.iter().map(|(language, words)| (*language, words.split_whitespace().collect())).collect()
    });
    static EMPTY: OnceLock<HashSet<&'static str>> = OnceLock::new();
    lists
        .iter()
        .find(|(l, _)| *l == language)
        .map_or_else(|| EMPTY.get_or_init(HashSet::new), |(_, words)| words)
}

/// Whether tantivy's stop-word filter for `language` (if it has one) drops `word`.
fn in_tantivy_list(word: &str, language: Language) -> bool {
    let Some(filter) = StopWordFilter::new(language) else { return false };
    let mut analyzer = TextAnalyzer::builder(RawTokenizer::default()).filter(filter).build();
    let mut stream = analyzer.token_stream(word);
    !stream.advance()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn language(name: &str) -> SearchLanguage {
        name.parse().unwrap()
    }

    #[test]
    fn question_words_carry_no_meaning_in_the_four_languages_kb_lists() {
        for (name, words, meaningful) in [
            ("english", ["when", "did", "the", "my", "how"], "passport"),
            ("german", ["wann", "ist", "der", "mein", "fur"], "termin"),
            ("french", ["quand", "est", "le", "mon", "ete"], "rendez"),
            ("spanish", ["cuando", "es", "el", "mi", "tambien"], "cita"),
        ] {
            for word in words {
                assert!(is_stop_word(word, language(name)), "{name}: {word}");
            }
            assert!(!is_stop_word(meaningful, language(name)), "{name}: {meaningful}");
        }
    }

    #[test]
    fn other_languages_use_tantivys_lists() {
        assert!(is_stop_word("della", language("italian")));
        assert!(!is_stop_word("appuntamento", language("italian")));
        // No list: every word counts.
        assert!(!is_stop_word("ve", language("turkish")));
    }
}
