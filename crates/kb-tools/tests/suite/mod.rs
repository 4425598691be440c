//! The suites.

mod agreement;
mod capture;
mod merge;
mod properties;
mod registry;
mod support;
mod tools;
