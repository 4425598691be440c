//! The suites.

mod agreement;
mod capture;
mod properties;
mod registry;
mod support;
mod tools;
