//! The errors underneath kb's own: [`Cause`], the boxed source an adapter's error keeps
//! (a database's, the search index's), and [`Chain`], which writes an error with every
//! source under it, for logs and for messages a person or the model reads.

use std::error::Error;
use std::fmt;

/// The error under one of kb's errors, kept as its `source()`: the port's error types
/// cannot name an adapter's error types (kb-domain depends on no database or index), so
/// they keep it boxed.
pub type Cause = Box<dyn Error + Send + Sync + 'static>;

/// Displays an error followed by each of its sources, `outer: inner: innermost`.
#[derive(Debug, Clone, Copy)]
pub struct Chain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read history")]
    struct Outer(#[source] Cause);

    #[test]
    fn a_chain_names_every_source_in_order() {
        let inner: Cause = Box::new(std::io::Error::other("disk full"));
        let outer = Outer(inner);
        assert_eq!(Chain(&outer).to_string(), "cannot read history: disk full");
        assert_eq!(outer.to_string(), "cannot read history");
    }
}
