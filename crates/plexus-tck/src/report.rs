//! What a run produces: the summary line, the markdown report with the pass rate per area, the list of passing
//! scenarios, and the check of a committed list against a run.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::runner::{Outcome, Status};
use crate::scenario::Scenario;

/// Counts of one run (or one area).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Counts {
    pub fn add(&mut self, status: Status) {
        match status {
            Status::Passed => self.passed += 1,
            Status::Failed => self.failed += 1,
            Status::Skipped => self.skipped += 1,
        }
    }

    pub fn total(&self) -> usize {
        self.passed + self.failed + self.skipped
    }

    pub fn of(outcomes: &[Outcome]) -> Counts {
        let mut c = Counts::default();
        outcomes.iter().for_each(|o| c.add(o.status));
        c
    }

    /// `TCK: N passed, M failed, K skipped of T`.
    pub fn summary_line(&self) -> String {
        format!("TCK: {} passed, {} failed, {} skipped of {}", self.passed, self.failed, self.skipped, self.total())
    }

    fn rate(&self) -> String {
        let run = self.passed + self.failed;
        if run == 0 {
            "-".into()
        } else {
            format!("{:.1}%", 100.0 * self.passed as f64 / run as f64)
        }
    }
}

/// Names of the passing scenarios, sorted, one per line.
pub fn passing_list(scenarios: &[&Scenario], outcomes: &[Outcome]) -> String {
    let names: BTreeSet<&str> = scenarios
        .iter()
        .zip(outcomes)
        .filter(|(_, o)| o.status == Status::Passed)
        .map(|(s, _)| s.name.as_str())
        .collect();
    names.into_iter().map(|n| format!("{n}\n")).collect()
}

/// Reads a list of scenario names (blank lines and `#` comments are ignored).
pub fn read_list(text: &str) -> Vec<String> {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect()
}

/// Which listed scenarios did not pass. Listed names that are not in the TCK at all are reported too; listed
/// scenarios left out of this run (by a filter) are not checked.
pub fn check_list(
    listed: &[String],
    all: &[Scenario],
    ran: &[&Scenario],
    outcomes: &[Outcome],
) -> Vec<(String, String)> {
    let known: BTreeSet<&str> = all.iter().map(|s| s.name.as_str()).collect();
    let results: HashMap<&str, &Outcome> = ran.iter().map(|s| s.name.as_str()).zip(outcomes).collect();
    let mut problems = Vec::new();
    for name in listed {
        if !known.contains(name.as_str()) {
            problems.push((name.clone(), "no scenario by this name in the TCK".into()));
        } else if let Some(outcome) = results.get(name.as_str()) {
            match outcome.status {
                Status::Passed => {}
                Status::Skipped => problems.push((name.clone(), "skipped".into())),
                Status::Failed => problems.push((name.clone(), outcome.message.clone())),
            }
        }
    }
    problems
}

/// The first line of a failure message, with the step number and query text taken out, so that failures with
/// the same cause group together.
fn reason(message: &str) -> String {
    let first = message.lines().next().unwrap_or("");
    let after_step = first.split_once("): ").map(|(_, r)| r).unwrap_or(first);
    let step_kind = first.split_once(" (").and_then(|(_, r)| r.split(['`', ')']).next()).unwrap_or("").trim();
    let cut: String = after_step.chars().take(140).collect();
    format!("{step_kind}: {cut}")
}

/// The markdown report: the command that made it, the summary, a table of areas, the most common failure reasons,
/// and error detail codes that differed in passing scenarios.
pub fn markdown(command: &str, version: &str, scenarios: &[&Scenario], outcomes: &[Outcome]) -> String {
    let mut areas: BTreeMap<String, Counts> = BTreeMap::new();
    let mut total = Counts::default();
    let mut reasons: HashMap<String, usize> = HashMap::new();
    let mut notes: BTreeMap<&str, usize> = BTreeMap::new();
    for (s, o) in scenarios.iter().zip(outcomes) {
        areas.entry(s.area()).or_default().add(o.status);
        total.add(o.status);
        if o.status == Status::Failed {
            *reasons.entry(reason(&o.message)).or_default() += 1;
        }
        for note in &o.notes {
            *notes.entry(note.as_str()).or_default() += 1;
        }
    }
    let mut out = String::new();
    out.push_str("# openCypher TCK results\n\n");
    out.push_str(&format!("Made by:\n\n```\n{command}\n```\n\n"));
    out.push_str(&format!("TCK {version}. {}\n\n", total.summary_line()));
    out.push_str("Pass rate = passed / (passed + failed); skipped scenarios are tagged `@ignore` in the TCK.\n\n");
    out.push_str("| Area | Scenarios | Passed | Failed | Skipped | Pass rate |\n");
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (area, c) in areas.iter().chain(std::iter::once((&"**all**".to_string(), &total))) {
        out.push_str(&format!(
            "| {area} | {} | {} | {} | {} | {} |\n",
            c.total(),
            c.passed,
            c.failed,
            c.skipped,
            c.rate()
        ));
    }
    if !reasons.is_empty() {
        let mut reasons: Vec<(String, usize)> = reasons.into_iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.push_str("\n## Most common failure reasons\n\n| Scenarios | Step: reason |\n| ---: | --- |\n");
        for (text, n) in reasons.iter().take(15) {
            out.push_str(&format!("| {n} | {} |\n", text.replace('|', "\\|")));
        }
    }
    if !notes.is_empty() {
        out.push_str("\n## Error detail codes that differ in passing scenarios\n\n");
        out.push_str(
            "Scenarios pass on the error type and phase; the TCK lets the detail differ (`--verbose` names them).\n\n",
        );
        out.push_str("| Scenarios | Difference |\n| ---: | --- |\n");
        for (note, n) in notes {
            out.push_str(&format!("| {n} | {note} |\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn scenario(name: &str, feature: &str) -> Scenario {
        Scenario { name: name.into(), feature: feature.into(), line: 1, steps: vec![], ignored: false }
    }

    fn outcome(status: Status, message: &str) -> Outcome {
        Outcome { status, message: message.into(), notes: vec![], elapsed: Duration::ZERO }
    }

    #[test]
    fn summary_and_areas() {
        let all = [
            scenario("b", "clauses/match/Match1.feature"),
            scenario("a", "clauses/match/Match2.feature"),
            scenario("c", "expressions/list/List1.feature"),
            scenario("d", "expressions/list/List1.feature"),
        ];
        let ran: Vec<&Scenario> = all.iter().collect();
        let mut passing = outcome(Status::Passed, "");
        passing.notes.push("detail: expected X, got Y".into());
        let outcomes = vec![
            passing,
            outcome(Status::Passed, ""),
            outcome(Status::Failed, "step 2 (When executing query `RETURN 1`): the query failed: boom"),
            outcome(Status::Skipped, ""),
        ];
        let counts = Counts::of(&outcomes);
        assert_eq!(counts.summary_line(), "TCK: 2 passed, 1 failed, 1 skipped of 4");
        assert_eq!(passing_list(&ran, &outcomes), "a\nb\n");
        let md = markdown("plexus-tck --report x.md", "1.0.0-M23", &ran, &outcomes);
        assert!(md.contains("| clauses/match | 2 | 2 | 0 | 0 | 100.0% |"), "{md}");
        assert!(md.contains("| expressions/list | 2 | 0 | 1 | 1 | 0.0% |"), "{md}");
        assert!(md.contains("| **all** | 4 | 2 | 1 | 1 | 66.7% |"), "{md}");
        assert!(md.contains("| 1 | When executing query: the query failed: boom |"), "{md}");
        assert!(md.contains("| 1 | detail: expected X, got Y |"), "{md}");
    }

    #[test]
    fn checking_a_list() {
        let all = vec![scenario("a", "x/y/A.feature"), scenario("b", "x/y/A.feature"), scenario("c", "x/y/A.feature")];
        let ran: Vec<&Scenario> = all.iter().take(2).collect();
        let outcomes = vec![outcome(Status::Passed, ""), outcome(Status::Failed, "broke")];
        let listed = read_list("# passing\na\n\nb\nc\nzzz\n");
        let problems = check_list(&listed, &all, &ran, &outcomes);
        assert_eq!(
            problems,
            [("b".into(), "broke".into()), ("zzz".into(), "no scenario by this name in the TCK".into())]
        );
    }
}
