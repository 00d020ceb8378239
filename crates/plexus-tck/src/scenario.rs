//! Loading the feature files: Gherkin parsing, Scenario Outline expansion, and turning step phrases into [`Step`]s.
//!
//! Every scenario gets a stable name, `<feature path> :: <scenario name>`, and an outline's expansions
//! `<feature path> :: <scenario name> [<example index>]`, the index counting example rows from 1 across all of the
//! outline's `Examples` blocks. The feature path is relative to the `features/` directory.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// When an expected error is raised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorPhase {
    CompileTime,
    Runtime,
    AnyTime,
}

impl ErrorPhase {
    /// As the feature files spell it.
    pub fn text(self) -> &'static str {
        match self {
            ErrorPhase::CompileTime => "compile time",
            ErrorPhase::Runtime => "runtime",
            ErrorPhase::AnyTime => "any time",
        }
    }
}

/// How rows of an expected result are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResultOrder {
    /// Rows in the given order (`in order`), otherwise as a multiset.
    pub rows_ordered: bool,
    /// `(ignoring element order for lists)`: lists compare as multisets.
    pub unordered_lists: bool,
}

/// One step, recognised from its phrase. Tables hold raw cells; values in them are parsed when the step runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    EmptyGraph,
    AnyGraph,
    NamedGraph(String),
    HavingExecuted(String),
    Parameters(Vec<Vec<String>>),
    Query(String),
    ControlQuery(String),
    Result {
        order: ResultOrder,
        table: Vec<Vec<String>>,
    },
    ResultEmpty,
    Error {
        kind: String,
        phase: ErrorPhase,
        detail: String,
    },
    SideEffects(Vec<Vec<String>>),
    NoSideEffects,
    /// `there exists a procedure NAME(in :: TYPE?, ...) :: (out :: TYPE?, ...)` with its table of rows.
    Procedure {
        signature: String,
        table: Vec<Vec<String>>,
    },
    /// A phrase this runner does not know.
    Unknown(String),
}

/// One runnable scenario (an outline contributes one per example row).
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    /// The feature file, relative to `features/`, with `/` separators.
    pub feature: String,
    /// Line of the scenario in the feature file.
    pub line: usize,
    pub steps: Vec<Step>,
    /// Tagged `@ignore` (on the feature, scenario or examples block): not run, counted as skipped.
    pub ignored: bool,
}

impl Scenario {
    /// The TCK area: the top two directory levels under `features/` (`clauses/match`).
    pub fn area(&self) -> String {
        let mut parts: Vec<&str> = self.feature.split('/').collect();
        parts.pop();
        parts.truncate(2);
        if parts.is_empty() {
            "(top)".into()
        } else {
            parts.join("/")
        }
    }
}

/// Loads every `.feature` file under `features_dir`, in path order.
pub fn load_dir(features_dir: &Path) -> Result<Vec<Scenario>, String> {
    let mut files = Vec::new();
    collect_features(features_dir, &mut files).map_err(|e| format!("reading {}: {e}", features_dir.display()))?;
    files.sort();
    if files.is_empty() {
        return Err(format!("no .feature files under {}", features_dir.display()));
    }
    let mut scenarios = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("reading {}: {e}", file.display()))?;
        let rel = file.strip_prefix(features_dir).unwrap_or(&file);
        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        scenarios.extend(load_feature(&rel, &text)?);
    }
    let mut seen = HashSet::new();
    for s in &scenarios {
        if !seen.insert(s.name.as_str()) {
            return Err(format!("two scenarios are named `{}`", s.name));
        }
    }
    Ok(scenarios)
}

fn collect_features(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_features(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "feature") {
            out.push(path);
        }
    }
    Ok(())
}

/// The `gherkin` crate accepts only `\n`, `\|` and `\\` as escapes in table cells and rejects the file otherwise;
/// Gherkin proper keeps any other backslash as it is. Doubling those lone backslashes gives Gherkin's meaning.
pub fn escape_table_backslashes(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        if !line.trim_start().starts_with('|') {
            out.push_str(line);
            continue;
        }
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.peek() {
                Some(&next @ ('n' | '|' | '\\')) => {
                    out.push('\\');
                    out.push(next);
                    chars.next();
                }
                _ => out.push_str("\\\\"),
            }
        }
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Parses one feature file's text; `rel_path` names it in scenario names.
pub fn load_feature(rel_path: &str, text: &str) -> Result<Vec<Scenario>, String> {
    let text = escape_table_backslashes(text);
    let feature = gherkin::Feature::parse(&text, gherkin::GherkinEnv::default())
        .map_err(|e| format!("parsing {rel_path}: {e}"))?;
    let ignored = |tags: &[String]| tags.iter().any(|t| t == "ignore" || t == "@ignore");
    let feature_ignored = ignored(&feature.tags);
    let background: Vec<gherkin::Step> = feature.background.as_ref().map(|b| b.steps.clone()).unwrap_or_default();

    let mut gherkin_scenarios: Vec<(&gherkin::Scenario, Vec<gherkin::Step>)> =
        feature.scenarios.iter().map(|s| (s, background.clone())).collect();
    for rule in &feature.rules {
        let mut steps = background.clone();
        steps.extend(rule.background.iter().flat_map(|b| b.steps.clone()));
        gherkin_scenarios.extend(rule.scenarios.iter().map(|s| (s, steps.clone())));
    }

    let mut out = Vec::new();
    for (scenario, background) in gherkin_scenarios {
        let base = format!("{rel_path} :: {}", scenario.name.trim());
        let scenario_ignored = feature_ignored || ignored(&scenario.tags);
        let all_steps: Vec<&gherkin::Step> = background.iter().chain(&scenario.steps).collect();
        if scenario.examples.is_empty() {
            out.push(Scenario {
                name: base,
                feature: rel_path.to_string(),
                line: scenario.position.line,
                steps: all_steps.iter().map(|s| classify(s, &[])).collect(),
                ignored: scenario_ignored,
            });
            continue;
        }
        let mut index = 0;
        for examples in &scenario.examples {
            let Some(table) = &examples.table else { continue };
            let Some((header, rows)) = table.rows.split_first() else { continue };
            for row in rows {
                index += 1;
                let bindings: Vec<(String, &str)> =
                    header.iter().zip(row).map(|(h, v)| (format!("<{}>", h.trim()), v.as_str())).collect();
                out.push(Scenario {
                    name: format!("{base} [{index}]"),
                    feature: rel_path.to_string(),
                    line: scenario.position.line,
                    steps: all_steps.iter().map(|s| classify(s, &bindings)).collect(),
                    ignored: scenario_ignored || ignored(&examples.tags),
                });
            }
        }
    }
    Ok(out)
}

/// Replaces every `<name>` placeholder by its example value.
fn substitute(text: &str, bindings: &[(String, &str)]) -> String {
    if bindings.is_empty() || !text.contains('<') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'outer: while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        for (placeholder, value) in bindings {
            if rest.starts_with(placeholder.as_str()) {
                out.push_str(value);
                rest = &rest[placeholder.len()..];
                continue 'outer;
            }
        }
        out.push('<');
        rest = &rest[1..];
    }
    out.push_str(rest);
    out
}

/// Recognises a step phrase (after substituting outline placeholders).
pub fn classify(step: &gherkin::Step, bindings: &[(String, &str)]) -> Step {
    let text = substitute(step.value.trim(), bindings);
    let doc = step.docstring.as_deref().map(|d| substitute(d.trim(), bindings));
    let table: Option<Vec<Vec<String>>> = step
        .table
        .as_ref()
        .map(|t| t.rows.iter().map(|r| r.iter().map(|c| substitute(c.trim(), bindings)).collect()).collect());
    let unknown = || Step::Unknown(format!("{} {}", step.keyword.trim(), text));
    let phrase = text.trim_end_matches(':').trim();
    match phrase {
        "an empty graph" => return Step::EmptyGraph,
        "any graph" => return Step::AnyGraph,
        "having executed" => return doc.map(Step::HavingExecuted).unwrap_or_else(unknown),
        "executing query" => return doc.map(Step::Query).unwrap_or_else(unknown),
        "executing control query" => return doc.map(Step::ControlQuery).unwrap_or_else(unknown),
        "parameters are" => return table.map(Step::Parameters).unwrap_or_else(unknown),
        "the result should be empty" => return Step::ResultEmpty,
        "the side effects should be" => return table.map(Step::SideEffects).unwrap_or_else(unknown),
        "no side effects" => return Step::NoSideEffects,
        _ => {}
    }
    if let Some(signature) = phrase.strip_prefix("there exists a procedure ") {
        return Step::Procedure { signature: signature.trim().to_string(), table: table.unwrap_or_default() };
    }
    if let Some(name) = phrase.strip_prefix("the ").and_then(|p| p.strip_suffix(" graph")) {
        if !name.is_empty() && !name.contains(' ') {
            return Step::NamedGraph(name.to_string());
        }
    }
    if let Some(mode) = phrase.strip_prefix("the result should be") {
        let order = match mode.trim().trim_start_matches(',').trim() {
            "in any order" => ResultOrder { rows_ordered: false, unordered_lists: false },
            "in order" => ResultOrder { rows_ordered: true, unordered_lists: false },
            "(ignoring element order for lists)" | "in any order (ignoring element order for lists)" => {
                ResultOrder { rows_ordered: false, unordered_lists: true }
            }
            "in order (ignoring element order for lists)" => ResultOrder { rows_ordered: true, unordered_lists: true },
            _ => return unknown(),
        };
        return table.map(|table| Step::Result { order, table }).unwrap_or_else(unknown);
    }
    if let Some(error) = parse_error_step(&text) {
        return error;
    }
    unknown()
}

/// `a TypeError should be raised at runtime: InvalidArgumentType`.
fn parse_error_step(text: &str) -> Option<Step> {
    let rest = text.strip_prefix("a ").or_else(|| text.strip_prefix("an "))?;
    let (kind, rest) = rest.split_once(" should be raised at ")?;
    let (phase, detail) = rest.split_once(':').unwrap_or((rest, ""));
    let phase = match phase.trim() {
        "compile time" => ErrorPhase::CompileTime,
        "runtime" => ErrorPhase::Runtime,
        "any time" => ErrorPhase::AnyTime,
        _ => return None,
    };
    Some(Step::Error { kind: kind.trim().to_string(), phase, detail: detail.trim().to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FEATURE: &str = r#"#
# A licence header.
#
Feature: Sample

  Background:
    Given any graph

  Scenario: [1] Plain
    And having executed:
      """
      CREATE (:A)
      """
    When executing query:
      """
      MATCH (n) RETURN n
      """
    Then the result should be, in any order:
      | n    |
      | (:A) |
    And no side effects

  @ignore
  Scenario: [2] Ignored
    Given the binary-tree-1 graph
    And parameters are:
      | x | 'a\'b' |
    When executing query:
      """
      RETURN $x
      """
    Then a SyntaxError should be raised at compile time: UnexpectedSyntax
    And there exists a procedure test.proc() :: ():
      | out |

  Scenario Outline: [3] Outline <v>
    When executing control query:
      """
      RETURN <v> AS v
      """
    Then the result should be, in order (ignoring element order for lists):
      | v        |
      | <result> |
    And the side effects should be:
      | +nodes | <n> |

    Examples:
      | v   | result | n |
      | 1   | 1      | 0 |
      | [2] | [2]    | 1 |

    Examples:
      | v   | result | n |
      | 'x' | 'x'    | 2 |
"#;

    #[test]
    fn expands_outlines_and_names_scenarios() {
        let scenarios = load_feature("clauses/x/X1.feature", FEATURE).unwrap();
        let names: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "clauses/x/X1.feature :: [1] Plain",
                "clauses/x/X1.feature :: [2] Ignored",
                "clauses/x/X1.feature :: [3] Outline <v> [1]",
                "clauses/x/X1.feature :: [3] Outline <v> [2]",
                "clauses/x/X1.feature :: [3] Outline <v> [3]",
            ]
        );
        assert_eq!(scenarios[0].area(), "clauses/x");
        assert!(!scenarios[0].ignored && scenarios[1].ignored);
        let outline = &scenarios[3];
        assert_eq!(outline.steps[0], Step::AnyGraph, "the background comes first");
        assert_eq!(outline.steps[1], Step::ControlQuery("RETURN [2] AS v".into()));
        assert_eq!(
            outline.steps[2],
            Step::Result {
                order: ResultOrder { rows_ordered: true, unordered_lists: true },
                table: vec![vec!["v".into()], vec!["[2]".into()]]
            }
        );
        assert_eq!(outline.steps[3], Step::SideEffects(vec![vec!["+nodes".into(), "1".into()]]));
    }

    #[test]
    fn recognises_steps() {
        let scenarios = load_feature("a/b/c/X.feature", FEATURE).unwrap();
        assert_eq!(scenarios[0].area(), "a/b");
        let plain = &scenarios[0].steps;
        assert_eq!(plain[1], Step::HavingExecuted("CREATE (:A)".into()));
        assert_eq!(plain[2], Step::Query("MATCH (n) RETURN n".into()));
        assert!(matches!(&plain[3], Step::Result { order, .. } if !order.rows_ordered && !order.unordered_lists));
        assert_eq!(plain[4], Step::NoSideEffects);
        let ignored = &scenarios[1].steps;
        assert_eq!(ignored[1], Step::NamedGraph("binary-tree-1".into()));
        assert_eq!(ignored[2], Step::Parameters(vec![vec!["x".into(), r"'a\'b'".into()]]));
        assert_eq!(
            ignored[4],
            Step::Error {
                kind: "SyntaxError".into(),
                phase: ErrorPhase::CompileTime,
                detail: "UnexpectedSyntax".into()
            }
        );
        assert!(matches!(&ignored[5], Step::Procedure { signature, .. } if signature.starts_with("test.proc()")));
    }

    #[test]
    fn error_phrases() {
        let e = parse_error_step("a TypeError should be raised at any time: InvalidArgumentType").unwrap();
        assert_eq!(
            e,
            Step::Error { kind: "TypeError".into(), phase: ErrorPhase::AnyTime, detail: "InvalidArgumentType".into() }
        );
        assert!(parse_error_step("a TypeError should be raised at dawn: X").is_none());
    }

    #[test]
    fn table_backslashes() {
        assert_eq!(
            escape_table_backslashes("  | '\\'' | \\n \\| \\\\ |\nx\\y"),
            "  | '\\\\'' | \\n \\| \\\\ |\nx\\y\n"
        );
    }

    #[test]
    fn substitution_leaves_unknown_placeholders() {
        let b = vec![("<a>".to_string(), "1")];
        assert_eq!(substitute("<a> < <b> <a>", &b), "1 < <b> 1");
    }
}
