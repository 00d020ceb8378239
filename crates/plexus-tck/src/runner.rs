//! Running scenarios. Each runs its steps in order against a fresh `plexus::Database::in_memory()`, on a thread of
//! its own: a panic is caught and counts as a failure, and a scenario still running after the timeout counts as
//! failed (its thread is abandoned; nothing else waits for it). [`run_all`] spreads scenarios over a few lanes.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, Once};
use std::time::{Duration, Instant};

use plexus::Database;
use plexus_cypher::{CypherError, Params, Phase, QueryResult};

use crate::compare::{check_result, to_param, ExpectedTable};
use crate::notation;
use crate::scenario::{ErrorPhase, Scenario, Step};
use crate::side_effects::{GraphState, SideEffects};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Passed,
    Failed,
    Skipped,
}

/// How one scenario went.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub status: Status,
    /// Why it failed (empty otherwise).
    pub message: String,
    /// Passing remarks, e.g. an error of the right type and phase with another detail code.
    pub notes: Vec<String>,
    pub elapsed: Duration,
}

impl Outcome {
    fn failed(message: impl Into<String>, elapsed: Duration) -> Outcome {
        Outcome { status: Status::Failed, message: message.into(), notes: Vec::new(), elapsed }
    }
}

/// A short description of a step for failure messages.
fn describe(step: &Step) -> String {
    match step {
        Step::EmptyGraph => "Given an empty graph".into(),
        Step::AnyGraph => "Given any graph".into(),
        Step::NamedGraph(name) => format!("Given the {name} graph"),
        Step::HavingExecuted(q) => format!("having executed `{}`", one_line(q)),
        Step::Parameters(_) => "parameters are".into(),
        Step::Query(q) => format!("When executing query `{}`", one_line(q)),
        Step::ControlQuery(q) => format!("When executing control query `{}`", one_line(q)),
        Step::Result { .. } => "Then the result should be".into(),
        Step::ResultEmpty => "Then the result should be empty".into(),
        Step::Error { kind, phase, detail } => format!("Then a {kind} should be raised at {}: {detail}", phase.text()),
        Step::SideEffects(_) => "the side effects should be".into(),
        Step::NoSideEffects => "no side effects".into(),
        Step::Procedure { signature, .. } => format!("there exists a procedure {signature}"),
        Step::Unknown(_) => "unsupported step".into(),
    }
}

fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() > 100 {
        format!("{}...", joined.chars().take(100).collect::<String>())
    } else {
        joined
    }
}

/// Runs a query: `Database::execute`, or a stand-in in tests.
pub type Execute = dyn Fn(&Database, &str, &Params) -> Result<QueryResult, CypherError>;

/// The state a scenario's steps share.
struct Context<'a> {
    graphs_dir: &'a Path,
    execute: &'a Execute,
    db: Database,
    params: Params,
    /// The result of the last `When` step.
    last: Option<Result<QueryResult, CypherError>>,
    /// The text of the last `When` step's query.
    last_query: String,
    /// Side effects of the last `executing query` step.
    effects: Option<SideEffects>,
    notes: Vec<String>,
}

impl Context<'_> {
    fn setup(&self, query: &str, what: &str) -> Result<(), String> {
        (self.execute)(&self.db, query, &self.params).map(drop).map_err(|e| format!("{what} failed: {e}"))
    }

    fn graph_script(&self, name: &str) -> Result<String, String> {
        let dir = self.graphs_dir.join(name);
        let mut path = dir.join(format!("{name}.cypher"));
        if !path.exists() {
            // The yago graph's script is named differently from its directory.
            let scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|e| format!("graph {name}: {e}"))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "cypher"))
                .collect();
            let [only] = scripts.as_slice() else {
                return Err(format!("graph {name}: expected one .cypher script in {}", dir.display()));
            };
            path = only.clone();
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        Ok(text.trim_end().trim_end_matches(';').to_string())
    }

    fn last_result(&self) -> Result<&QueryResult, String> {
        match &self.last {
            Some(Ok(result)) => Ok(result),
            Some(Err(e)) => Err(format!("the query failed: {e}\nquery: {}", one_line(&self.last_query))),
            None => Err("no query has run".into()),
        }
    }

    fn step(&mut self, step: &Step) -> Result<(), String> {
        match step {
            Step::EmptyGraph | Step::AnyGraph => Ok(()),
            Step::NamedGraph(name) => {
                let script = self.graph_script(name)?;
                self.setup(&script, &format!("creating the {name} graph"))
            }
            Step::HavingExecuted(query) => self.setup(query, "the setup query"),
            Step::Procedure { signature, table } => {
                let (signature, rows) = procedure(signature, table)?;
                let inputs = signature.inputs.len();
                self.db.register_procedure(signature, move |args| {
                    Ok(rows
                        .iter()
                        .filter(|row| {
                            row[..inputs].iter().zip(args).all(|(a, b)| plexus::cypher::compare::equivalent(a, b))
                        })
                        .map(|row| row[inputs..].to_vec())
                        .collect())
                });
                Ok(())
            }
            Step::Parameters(rows) => {
                for row in rows {
                    let [name, value] = row.as_slice() else {
                        return Err(format!("a parameter row has {} cells", row.len()));
                    };
                    let value = notation::parse(value).and_then(|v| to_param(&v))?;
                    self.params.insert(name.clone(), value);
                }
                Ok(())
            }
            Step::Query(query) => {
                self.last_query = query.clone();
                let before = GraphState::capture(&self.db.read());
                self.last = Some((self.execute)(&self.db, query, &self.params));
                self.effects = Some(before.diff(&GraphState::capture(&self.db.read())));
                Ok(())
            }
            Step::ControlQuery(query) => {
                self.last_query = query.clone();
                self.last = Some((self.execute)(&self.db, query, &self.params));
                Ok(())
            }
            Step::Result { order, table } => {
                let expected = ExpectedTable::parse(table)?;
                check_result(&expected, self.last_result()?, *order)
            }
            Step::ResultEmpty => {
                let result = self.last_result()?;
                if result.rows.is_empty() {
                    Ok(())
                } else {
                    let rows: Vec<String> = result
                        .rows
                        .iter()
                        .take(5)
                        .map(|r| {
                            let cells: Vec<String> =
                                r.iter().map(|v| crate::compare::from_result(v).to_string()).collect();
                            format!("  | {} |", cells.join(" | "))
                        })
                        .collect();
                    Err(format!("expected no rows, got {}:\n{}", result.rows.len(), rows.join("\n")))
                }
            }
            Step::Error { kind, phase, detail } => self.check_error(kind, *phase, detail),
            Step::SideEffects(rows) => self.check_effects(SideEffects::from_table(rows)?),
            Step::NoSideEffects => self.check_effects(SideEffects::default()),
            Step::Unknown(text) => Err(text.clone()),
        }
    }

    fn check_error(&mut self, kind: &str, phase: ErrorPhase, detail: &str) -> Result<(), String> {
        let wanted = format!("{kind} at {} ({detail})", phase.text());
        let error = match &self.last {
            Some(Err(e)) => e,
            Some(Ok(r)) => {
                return Err(format!("expected {wanted}, but the query succeeded with {} rows", r.rows.len()))
            }
            None => return Err("no query has run".into()),
        };
        let phase_ok = match phase {
            ErrorPhase::AnyTime => true,
            ErrorPhase::CompileTime => error.phase == Phase::CompileTime,
            ErrorPhase::Runtime => error.phase == Phase::Runtime,
        };
        if error.kind.name() != kind || !phase_ok {
            let got = if error.phase == Phase::CompileTime { "compile time" } else { "runtime" };
            return Err(format!("expected {wanted}, got {} at {got}: {error}", error.kind.name()));
        }
        // `*` stands for any detail.
        if error.detail != detail && detail != "*" {
            self.notes.push(format!("detail: expected {detail}, got {}", display_detail(error.detail)));
        }
        Ok(())
    }

    fn check_effects(&self, expected: SideEffects) -> Result<(), String> {
        let actual = self.effects.ok_or("no query has run")?;
        if actual == expected {
            Ok(())
        } else {
            Err(format!("side effects: expected {expected}, got {actual}"))
        }
    }
}

fn display_detail(detail: &str) -> &str {
    if detail.is_empty() {
        "none"
    } else {
        detail
    }
}

/// Runs one scenario on the calling thread (panics propagate; see [`run_all`]).
pub fn run_scenario(scenario: &Scenario, graphs_dir: &Path) -> Outcome {
    run_scenario_with(scenario, graphs_dir, &|db, query, params| db.execute(query, params))
}

/// [`run_scenario`] with queries run by `execute`.
pub fn run_scenario_with(scenario: &Scenario, graphs_dir: &Path, execute: &Execute) -> Outcome {
    let start = Instant::now();
    if scenario.ignored {
        return Outcome {
            status: Status::Skipped,
            message: String::new(),
            notes: Vec::new(),
            elapsed: start.elapsed(),
        };
    }
    let mut cx = Context {
        graphs_dir,
        execute,
        db: Database::in_memory(),
        params: Params::new(),
        last: None,
        last_query: String::new(),
        effects: None,
        notes: Vec::new(),
    };
    for (i, step) in scenario.steps.iter().enumerate() {
        if let Err(message) = cx.step(step) {
            return Outcome::failed(format!("step {} ({}): {message}", i + 1, describe(step)), start.elapsed());
        }
    }
    Outcome { status: Status::Passed, message: String::new(), notes: cx.notes, elapsed: start.elapsed() }
}

thread_local! {
    static IN_SCENARIO: Cell<bool> = const { Cell::new(false) };
    static PANIC_TEXT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Panics on scenario threads are recorded for the report instead of printed; others go to the previous hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_SCENARIO.with(Cell::get) {
                PANIC_TEXT.with(|t| *t.borrow_mut() = Some(info.to_string()));
            } else {
                previous(info);
            }
        }));
    });
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    PANIC_TEXT.with(|t| t.borrow_mut().take()).unwrap_or_else(|| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into())
    })
}

/// Runs `work` on a thread of its own, turning a panic into a failure and giving up after `timeout`.
pub fn run_guarded(work: impl FnOnce() -> Outcome + Send + 'static, name: String, timeout: Duration) -> Outcome {
    install_panic_hook();
    let start = Instant::now();
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new().name(name).stack_size(64 << 20).spawn(move || {
        IN_SCENARIO.with(|f| f.set(true));
        let outcome = panic::catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|payload| {
            Outcome::failed(format!("panicked: {}", panic_message(payload.as_ref())), start.elapsed())
        });
        let _ = tx.send(outcome);
    });
    if let Err(e) = spawned {
        return Outcome::failed(format!("could not start a thread: {e}"), start.elapsed());
    }
    match rx.recv_timeout(timeout) {
        Ok(outcome) => outcome,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Outcome::failed(format!("timed out after {} s", timeout.as_secs_f64()), start.elapsed())
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Outcome::failed("the scenario thread died", start.elapsed()),
    }
}

/// Runs one scenario in isolation (see [`run_guarded`]).
pub fn run_isolated(
    scenarios: &Arc<Vec<Scenario>>,
    index: usize,
    graphs_dir: &Arc<PathBuf>,
    timeout: Duration,
) -> Outcome {
    let (scenarios, graphs_dir) = (Arc::clone(scenarios), Arc::clone(graphs_dir));
    run_guarded(move || run_scenario(&scenarios[index], &graphs_dir), format!("tck-{index}"), timeout)
}

/// Runs the scenarios at `indices` over `lanes` parallel lanes; returns outcomes in the order of `indices`.
/// `progress` is called after each scenario with the number done so far.
pub fn run_all(
    scenarios: &Arc<Vec<Scenario>>,
    indices: &[usize],
    graphs_dir: &Path,
    lanes: usize,
    timeout: Duration,
    progress: &(dyn Fn(usize) + Sync),
) -> Vec<Outcome> {
    let graphs_dir = Arc::new(graphs_dir.to_path_buf());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; indices.len()]);
    std::thread::scope(|scope| {
        for _ in 0..lanes.max(1) {
            scope.spawn(|| loop {
                let slot = next.fetch_add(1, Ordering::Relaxed);
                let Some(&index) = indices.get(slot) else { break };
                let outcome = run_isolated(scenarios, index, &graphs_dir, timeout);
                results.lock().unwrap_or_else(|e| e.into_inner())[slot] = Some(outcome);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Outcome::failed("not run", Duration::ZERO)))
        .collect()
}

/// Parses `name(a :: T?, ...) :: (x :: T?, ...)` and the step's table (header: inputs then outputs).
fn procedure(
    text: &str,
    table: &[Vec<String>],
) -> Result<(plexus::cypher::ProcedureSignature, Vec<Vec<plexus::cypher::Value>>), String> {
    use plexus::cypher::{ParamType, ProcedureSignature};
    let close = text.find(')').ok_or_else(|| format!("bad signature {text}"))?;
    let head = text[..=close].trim();
    let outputs = text[close + 1..].trim().strip_prefix("::").ok_or_else(|| format!("bad signature {text}"))?;
    let open = head.find('(').ok_or_else(|| format!("bad signature {text}"))?;
    let name = head[..open].trim().to_string();
    let params = |list: &str| -> Result<Vec<(String, ParamType)>, String> {
        let list = list.trim().trim_end_matches(':').trim();
        let inner = list.trim_start_matches('(').trim_end_matches(')').trim();
        if inner.is_empty() {
            return Ok(vec![]);
        }
        inner
            .split(',')
            .map(|p| {
                let (n, t) = p.split_once("::").ok_or_else(|| format!("bad parameter {p}"))?;
                let ty = ParamType::parse(t).ok_or_else(|| format!("unknown type {t}"))?;
                Ok((n.trim().to_string(), ty))
            })
            .collect()
    };
    let inputs = params(&head[open..])?;
    let outputs = params(outputs)?;
    let width = inputs.len() + outputs.len();
    let mut rows = Vec::new();
    for row in table.iter().skip(1) {
        let cells: Vec<&String> = row.iter().filter(|c| !c.is_empty()).collect();
        if cells.is_empty() {
            continue;
        }
        if cells.len() != width {
            return Err(format!("a procedure row has {} cells, expected {width}", cells.len()));
        }
        rows.push(cells.iter().map(|c| notation::parse(c).and_then(|v| to_param(&v))).collect::<Result<Vec<_>, _>>()?);
    }
    Ok((ProcedureSignature { name, inputs, outputs, description: String::new() }, rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ResultOrder;

    fn scenario(steps: Vec<Step>) -> Arc<Vec<Scenario>> {
        Arc::new(vec![Scenario { name: "t".into(), feature: "a/b.feature".into(), line: 1, steps, ignored: false }])
    }

    #[test]
    fn unknown_steps_fail_with_their_text() {
        let s = scenario(vec![Step::EmptyGraph, Step::Unknown("And there exists a procedure p".into())]);
        let out = run_scenario(&s[0], Path::new("."));
        assert_eq!(out.status, Status::Failed);
        assert!(out.message.contains("there exists a procedure p"), "{}", out.message);
    }

    #[test]
    fn steps_without_queries_fail_cleanly() {
        let s = scenario(vec![Step::AnyGraph, Step::NoSideEffects]);
        assert!(run_scenario(&s[0], Path::new(".")).message.contains("no query has run"));
        let order = ResultOrder { rows_ordered: false, unordered_lists: false };
        let s = scenario(vec![Step::Result { order, table: vec![vec!["x".into()]] }]);
        assert_eq!(run_scenario(&s[0], Path::new(".")).status, Status::Failed);
    }

    #[test]
    fn parameters_are_checked() {
        let s = scenario(vec![Step::Parameters(vec![vec!["p".into(), "[1, 'x'".into()]])]);
        assert!(run_scenario(&s[0], Path::new(".")).message.contains("expected"));
        let s = scenario(vec![Step::Parameters(vec![vec!["p".into(), "{a: [1, 'x']}".into()]])]);
        assert_eq!(run_scenario(&s[0], Path::new(".")).status, Status::Passed);
    }

    #[test]
    fn errors_match_by_type_and_phase() {
        // Until the engine runs queries, every query fails with a compile-time SyntaxError.
        let mut cx = Context {
            graphs_dir: Path::new("."),
            execute: &|db, q, p| db.execute(q, p),
            db: Database::in_memory(),
            params: Params::new(),
            last: Some(Err(CypherError::syntax("UnexpectedSyntax", "boom"))),
            last_query: String::new(),
            effects: None,
            notes: Vec::new(),
        };
        assert!(cx.check_error("SyntaxError", ErrorPhase::CompileTime, "UnexpectedSyntax").is_ok());
        assert!(cx.notes.is_empty());
        assert!(cx.check_error("SyntaxError", ErrorPhase::AnyTime, "InvalidNumberLiteral").is_ok());
        assert_eq!(cx.notes, ["detail: expected InvalidNumberLiteral, got UnexpectedSyntax"]);
        assert!(cx.check_error("SyntaxError", ErrorPhase::AnyTime, "*").is_ok());
        assert_eq!(cx.notes.len(), 1);
        let wrong_phase = cx.check_error("SyntaxError", ErrorPhase::Runtime, "UnexpectedSyntax").unwrap_err();
        assert!(
            wrong_phase.contains("expected SyntaxError at runtime (UnexpectedSyntax), got SyntaxError at compile time")
        );
        assert!(cx.check_error("TypeError", ErrorPhase::CompileTime, "UnexpectedSyntax").is_err());
    }

    #[test]
    fn panics_and_timeouts_are_failures() {
        let quick = Duration::from_millis(300);
        let out = run_guarded(|| panic!("engine bug {}", 42), "p".into(), quick);
        assert_eq!(out.status, Status::Failed);
        assert!(out.message.contains("engine bug 42"), "{}", out.message);
        let out = run_guarded(
            || {
                std::thread::sleep(Duration::from_secs(2));
                Outcome::failed("finished", Duration::ZERO)
            },
            "slow".into(),
            quick,
        );
        assert!(out.message.contains("timed out"), "{}", out.message);
    }

    #[test]
    fn isolated_and_parallel_runs() {
        let s = scenario(vec![Step::EmptyGraph]);
        let dir = Arc::new(PathBuf::from("."));
        assert_eq!(run_isolated(&s, 0, &dir, Duration::from_secs(10)).status, Status::Passed);
        // A graph directory that is not there makes the step fail, not panic.
        let s = scenario(vec![Step::NamedGraph("nope".into())]);
        let out = run_isolated(&s, 0, &dir, Duration::from_secs(10));
        assert!(out.message.contains("graph nope"), "{}", out.message);
        let out = run_all(&s, &[0, 0, 0], Path::new("."), 2, Duration::from_secs(10), &|_| {});
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|o| o.status == Status::Failed));
    }
}
