//! Guards the committed list of passing TCK scenarios (`passing.txt`): fetches the TCK, runs every scenario, prints
//! `TCK: N passed, M failed, K skipped of 3897`, and fails if any listed scenario no longer passes.
//!
//! Without network access the test is skipped with a warning, except under CI (`CI` set), where it fails.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use plexus_tck::compare::{self, ExpectedTable};
use plexus_tck::fetch::{self, FetchError};
use plexus_tck::report::{self, Counts};
use plexus_tck::scenario::Step;
use plexus_tck::side_effects::SideEffects;
use plexus_tck::{notation, runner, scenario};

const PASSING: &str = include_str!("../passing.txt");

/// Printed past the test harness's capture, so that the summary shows in every run.
fn say(line: &str) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// The TCK and its scenarios; `None` (after a warning) when it cannot be downloaded outside CI.
fn load() -> Option<(fetch::TckDir, Arc<Vec<scenario::Scenario>>)> {
    let tck = match fetch::ensure(&fetch::default_cache_root()) {
        Ok(tck) => tck,
        Err(FetchError::Download(message)) if std::env::var_os("CI").is_none() => {
            say(&format!("\n*** TCK NOT RUN: the TCK could not be downloaded ({message}). CI would fail here. ***\n"));
            return None;
        }
        Err(e) => panic!("{e}"),
    };
    let all = Arc::new(scenario::load_dir(&tck.features()).expect("loading the feature files"));
    assert_eq!(all.len(), fetch::SCENARIO_COUNT, "expanded scenarios in TCK {}", fetch::VERSION);
    Some((tck, all))
}

#[test]
fn listed_scenarios_still_pass() {
    let Some((tck, all)) = load() else { return };
    let indices: Vec<usize> = (0..all.len()).collect();
    let outcomes = runner::run_all(&all, &indices, &tck.graphs(), 2, Duration::from_secs(10), &|_| {});
    let ran: Vec<&scenario::Scenario> = all.iter().collect();
    let problems = report::check_list(&report::read_list(PASSING), &all, &ran, &outcomes);
    for (name, why) in &problems {
        say(&format!("REGRESSION {name}\n  {}", why.replace('\n', "\n  ")));
    }
    say(&Counts::of(&outcomes).summary_line());
    assert!(problems.is_empty(), "{} scenarios listed in passing.txt no longer pass", problems.len());
}

#[test]
fn the_list_is_sorted_and_has_no_duplicates() {
    let names = report::read_list(PASSING);
    assert!(names.windows(2).all(|w| w[0] < w[1]), "passing.txt must be sorted, without duplicates");
}

/// Every expected value, parameter and side effect table in the TCK is understood by the runner, so failures are
/// the engine's.
#[test]
fn every_table_in_the_tck_parses() {
    let Some((_, all)) = load() else { return };
    let mut problems = Vec::new();
    for s in all.iter() {
        for step in &s.steps {
            let problem = match step {
                Step::Result { table, .. } => ExpectedTable::parse(table).err(),
                Step::Parameters(rows) => {
                    rows.iter().find_map(|r| notation::parse(&r[1]).and_then(|v| compare::to_param(&v)).err())
                }
                Step::SideEffects(rows) => SideEffects::from_table(rows).err(),
                _ => None,
            };
            if let Some(p) = problem {
                problems.push(format!("{}: {p}", s.name));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
