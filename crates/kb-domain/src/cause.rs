//! The errors underneath kb's own: [`Cause`], the boxed source an adapter's error keeps
//! (a database's, the search index's), [`SharedCause`], the same for errors that are
//! cloned, and [`Chain`], which writes an error with every
//! source under it, for logs and for messages a person or the model reads.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

/// The error under one of kb's errors, kept as its `source()`: the port's error types
/// cannot name an adapter's error types (kb-domain depends on no database or index), so
/// they keep it boxed.
pub type Cause = Box<dyn Error + Send + Sync + 'static>;

/// The error under a failure that is itself cloned (a model's failure travels inside tool
/// results and turn errors): shared rather than boxed. Two are equal when they say the same
/// thing, so a failure compares by what a person reads.
#[derive(Debug, Clone)]
pub struct SharedCause(Arc<dyn Error + Send + Sync + 'static>);

impl SharedCause {
    /// Keeps `error` as a cause.
    pub fn new(error: impl Error + Send + Sync + 'static) -> SharedCause {
        SharedCause(Arc::new(error))
    }

    /// Keeps an already boxed error as a cause.
    pub fn from_boxed(error: Cause) -> SharedCause {
        SharedCause(Arc::from(error))
    }
}

impl fmt::Display for SharedCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Error for SharedCause {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for SharedCause {
    fn eq(&self, other: &SharedCause) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl Eq for SharedCause {}

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

    #[test]
    fn a_shared_cause_reads_as_its_error_with_the_same_sources() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot reach the model")]
        struct Reach(#[source] std::io::Error);
        let cause = SharedCause::new(Reach(std::io::Error::other("connection refused")));
        let outer = Outer(Box::new(cause.clone()));
        assert_eq!(
            Chain(&outer).to_string(),
            "cannot read history: cannot reach the model: connection refused"
        );
        assert_eq!(cause, SharedCause::new(Reach(std::io::Error::other("refused"))));
        assert_ne!(cause, SharedCause::new(std::io::Error::other("refused")));
    }
}
