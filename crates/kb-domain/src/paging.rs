//! Page sizes of lists and searches: one rule for every way in (the tools, the HTTP API,
//! the CLI, the search index).

/// How many entries a list or a search gives when no limit is asked for.
pub const DEFAULT_PAGE_SIZE: usize = 10;

/// The most entries one page of a list or a search gives; larger limits are capped.
pub const MAX_PAGE_SIZE: usize = 100;

/// The page size for a requested limit: [`DEFAULT_PAGE_SIZE`] when none is given, capped
/// at [`MAX_PAGE_SIZE`]. (A limit of 0 is refused by the callers that take one.)
pub fn page_size(requested: Option<u64>) -> usize {
    requested.map_or(DEFAULT_PAGE_SIZE, |n| usize::try_from(n).unwrap_or(MAX_PAGE_SIZE).min(MAX_PAGE_SIZE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_caps() {
        assert_eq!(page_size(None), DEFAULT_PAGE_SIZE);
        assert_eq!(page_size(Some(7)), 7);
        assert_eq!(page_size(Some(5000)), MAX_PAGE_SIZE);
        assert_eq!(page_size(Some(u64::MAX)), MAX_PAGE_SIZE);
    }
}
