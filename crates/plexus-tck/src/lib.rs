//! The openCypher TCK (Technology Compatibility Kit) runner for Plexus.
//!
//! [`fetch`] downloads and unpacks the TCK's feature files; [`scenario`] parses them with the `gherkin` crate,
//! expands Scenario Outlines and recognises the step phrases; [`runner`] runs each scenario against a fresh
//! in-memory database; [`notation`] reads and writes the TCK's value notation; [`compare`] converts engine values
//! and compares results; [`side_effects`] diffs graph states; [`report`] summarises a run. The `plexus-tck`
//! binary puts these together, and `tests/tck.rs` guards the committed list of passing scenarios.

pub mod compare;
pub mod fetch;
pub mod notation;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod side_effects;
