//! The vectors kept beside the search index: entries cut into parts ([`chunk`]), the
//! parts' embeddings in an append-only file per model ([`store`]), and the queries on
//! nothing in particular that calibrate the cut of matches by meaning
//! ([`UNRELATED_QUERIES`]).

pub mod chunk;
pub mod store;

/// Queries on subjects far from one another, which most vaults hold nothing about: how
/// high a vault's best part scores for them is how high a part scores by chance (see
/// `store::calibration`). One a vault is about is outvoted by the others.
pub const UNRELATED_QUERIES: [&str; 20] = [
    "history of the Roman aqueducts",
    "migration routes of arctic terns",
    "rules of cricket",
    "origami crane folding",
    "the chemistry of volcanic glass",
    "jazz saxophone improvisation",
    "coral reef ecosystems",
    "the life of Napoleon",
    "how glaciers carve valleys",
    "ancient Egyptian hieroglyphs",
    "the physics of rainbows",
    "beekeeping for honey",
    "opera singers of the 1800s",
    "desert cactus species",
    "the rules of chess openings",
    "submarine warfare in the Atlantic",
    "the poetry of Rumi",
    "train timetables of Switzerland",
    "dinosaur fossils in Patagonia",
    "tea ceremony traditions",
];
