//! The openCypher TCK (Technology Compatibility Kit) runner for Plexus.
//!
//! [`fetch`] downloads and unpacks the TCK's feature files; [`scenario`] parses them with the `gherkin` crate,
//! expands Scenario Outlines and recognises the step phrases; [`notation`] reads and writes the TCK's value
//! notation.

pub mod fetch;
pub mod notation;
pub mod scenario;
