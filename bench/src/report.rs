//! The benchmark report: result rows checked against their targets, the description of the machine they ran on,
//! and the markdown rendering written to `bench/results/`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a result must reach.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    AtLeast(f64),
    AtMost(f64),
    /// Must be strictly above the given value (the previous row of a series that has to rise).
    Above(f64),
    /// Reported for context only.
    Info,
}

impl Target {
    pub fn passes(&self, value: f64) -> Option<bool> {
        match *self {
            Target::AtLeast(t) => Some(value >= t),
            Target::AtMost(t) => Some(value <= t),
            Target::Above(t) => Some(value > t),
            Target::Info => None,
        }
    }

    /// Result divided by target: above 1 is better for `AtLeast`/`Above`, below 1 for `AtMost`.
    pub fn ratio(&self, value: f64) -> Option<f64> {
        match *self {
            Target::AtLeast(t) | Target::AtMost(t) | Target::Above(t) if t > 0.0 => Some(value / t),
            _ => None,
        }
    }

    fn describe(&self, unit: &str) -> String {
        match *self {
            Target::AtLeast(t) => format!("≥ {}", with_unit(t, unit)),
            Target::AtMost(t) => format!("≤ {}", with_unit(t, unit)),
            Target::Above(t) => format!("> {} (previous row)", with_unit(t, unit)),
            Target::Info => "—".into(),
        }
    }
}

/// One measured result.
#[derive(Clone, Debug)]
pub struct Row {
    pub name: String,
    pub value: f64,
    pub unit: &'static str,
    pub target: Target,
    /// Rate per second of CPU time, for single-threaded cases (see `Rate::per_cpu_sec`).
    pub cpu: Option<f64>,
    /// Values for the table's extra columns, in order.
    pub extra: Vec<String>,
}

impl Row {
    pub fn new(name: impl Into<String>, value: f64, unit: &'static str, target: Target) -> Row {
        Row { name: name.into(), value, unit, target, cpu: None, extra: Vec::new() }
    }

    /// A row for a measured rate: wall-clock result, with the CPU-time rate alongside.
    pub fn rate(name: impl Into<String>, rate: crate::Rate, unit: &'static str, target: Target) -> Row {
        Row { cpu: Some(rate.per_cpu_sec), ..Row::new(name, rate.per_sec, unit, target) }
    }

    pub fn with(mut self, extra: impl Into<String>) -> Row {
        self.extra.push(extra.into());
        self
    }

    pub fn verdict(&self) -> &'static str {
        match self.target.passes(self.value) {
            Some(true) => "pass",
            Some(false) => "**miss**",
            None => "info",
        }
    }
}

/// The results of one workload.
#[derive(Clone, Debug)]
pub struct Table {
    /// Short key (`w1`..`w7`); also names the optional notes file `results/notes/<id>.md`.
    pub id: &'static str,
    pub title: String,
    /// How the workload was set up, one line each.
    pub setup: Vec<String>,
    pub extra_headers: Vec<&'static str>,
    pub rows: Vec<Row>,
}

impl Table {
    pub fn new(id: &'static str, title: impl Into<String>) -> Table {
        Table { id, title: title.into(), setup: Vec::new(), extra_headers: Vec::new(), rows: Vec::new() }
    }

    pub fn misses(&self) -> usize {
        self.rows.iter().filter(|r| r.target.passes(r.value) == Some(false)).count()
    }

    pub fn render(&self, out: &mut String) {
        let _ = writeln!(out, "## {}: {}\n", self.id.to_uppercase(), self.title);
        for line in &self.setup {
            let _ = writeln!(out, "- {line}");
        }
        if !self.setup.is_empty() {
            out.push('\n');
        }
        let mut header = String::from("| workload | result | target | ratio to target | pass/miss |");
        let mut rule = String::from("|---|---:|---:|---:|---|");
        let cpu_column = self.rows.iter().any(|r| r.cpu.is_some());
        if cpu_column {
            header.push_str(" per CPU-second |");
            rule.push_str("---:|");
        }
        for h in &self.extra_headers {
            let _ = write!(header, " {h} |");
            rule.push_str("---:|");
        }
        let _ = writeln!(out, "{header}\n{rule}");
        for r in &self.rows {
            let ratio = r.target.ratio(r.value).map_or("—".into(), |x| format!("{x:.2}×"));
            let _ = write!(
                out,
                "| {} | {} | {} | {} | {} |",
                r.name,
                with_unit(r.value, r.unit),
                r.target.describe(r.unit),
                ratio,
                r.verdict()
            );
            if cpu_column {
                let _ = write!(out, " {} |", r.cpu.map_or("—".into(), |c| with_unit(c, r.unit)));
            }
            for e in &r.extra {
                let _ = write!(out, " {e} |");
            }
            out.push('\n');
        }
        out.push('\n');
    }
}

/// A number in a readable form: millions with a suffix, thousands grouped, small numbers with decimals.
pub fn human(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if a >= 1e4 {
        let n = v.round() as i64;
        let s = n.abs().to_string();
        let mut grouped = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(ch);
        }
        if n < 0 {
            format!("-{grouped}")
        } else {
            grouped
        }
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn with_unit(v: f64, unit: &str) -> String {
    if unit.is_empty() {
        human(v)
    } else if unit == "×" {
        format!("{v:.2}×")
    } else {
        format!("{} {unit}", human(v))
    }
}

/// The description of the machine, from /proc.
pub fn machine() -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown".to_string(), |(_, m)| m.trim().to_string());
    let logical = cpuinfo.lines().filter(|l| l.starts_with("processor")).count();
    let usable = std::thread::available_parallelism().map_or(0, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kb = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or(0.0);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    vec![
        ("CPU".into(), model),
        ("cores".into(), format!("{logical} logical ({usable} usable by this process)")),
        ("memory".into(), format!("{:.1} GiB", mem_kb / (1024.0 * 1024.0))),
        ("load average at start (1, 5, 15 min)".into(), load.join(", ")),
    ]
}

/// Machine-wide CPU seconds from /proc/stat: busy (all processes, user + system + interrupts) and stolen.
pub struct CpuTimes {
    pub busy: f64,
    pub steal: f64,
}

pub fn cpu_times() -> CpuTimes {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let fields: Vec<f64> =
        stat.lines().next().unwrap_or_default().split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
    let at = |i: usize| fields.get(i).copied().unwrap_or(0.0);
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // user, nice, system, idle, iowait, irq, softirq, steal
    CpuTimes { busy: (at(0) + at(1) + at(2) + at(5) + at(6)) / hz, steal: at(7) / hz }
}

/// Resident set size of this process in bytes (VmRSS).
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// The file system type holding `path`, from the longest matching mount point.
pub fn fs_type(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_dev, mount, fstype) = (f.next()?, f.next()?, f.next()?);
            path.starts_with(mount).then(|| (mount.len(), fstype.to_string()))
        })
        .max_by_key(|(len, _)| *len)
        .map_or("unknown".into(), |(_, t)| t)
}

/// Today's date (UTC) as YYYY-MM-DD, without a calendar dependency.
pub fn today() -> String {
    let days = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs() as i64 / 86_400;
    // Civil-from-days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A whole run: what produced it, where, and every table.
pub struct Report {
    pub title: &'static str,
    pub command: String,
    pub scale: f64,
    pub revision: String,
    pub machine: Vec<(String, String)>,
    pub tables: Vec<Table>,
    pub elapsed: Duration,
}

impl Report {
    /// Markdown for the whole report; `notes_dir` holds hand-written analysis (`<table id>.md`) placed under
    /// the matching table, and `intro.md` placed before the tables, so profiling findings survive a rerun.
    pub fn render(&self, notes_dir: Option<&Path>) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# {}\n", self.title);
        let _ = writeln!(out, "Produced by:\n\n```sh\n{}\n```\n", self.command);
        let _ = writeln!(out, "| | |\n|---|---|");
        let _ = writeln!(out, "| date | {} |", today());
        let _ = writeln!(out, "| revision | {} |", self.revision);
        let _ = writeln!(out, "| scale | {} |", self.scale);
        for (k, v) in &self.machine {
            let _ = writeln!(out, "| {k} | {v} |");
        }
        let _ = writeln!(out, "| run time | {:.0} s |", self.elapsed.as_secs_f64());
        let misses: usize = self.tables.iter().map(Table::misses).sum();
        let rows: usize =
            self.tables.iter().map(|t| t.rows.iter().filter(|r| r.target.passes(0.0).is_some()).count()).sum();
        let _ = writeln!(out, "| targets met | {} of {} |\n", rows - misses, rows);
        if self.scale != 1.0 {
            let _ = writeln!(out, "Sizes are scaled by {}: results are not comparable with the targets.\n", self.scale);
        }
        if let Some(intro) = notes_dir.and_then(|d| std::fs::read_to_string(d.join("intro.md")).ok()) {
            out.push_str(intro.trim_end());
            out.push_str("\n\n");
        }
        for t in &self.tables {
            t.render(&mut out);
            if let Some(notes) = notes_dir.and_then(|d| std::fs::read_to_string(d.join(format!("{}.md", t.id))).ok()) {
                out.push_str(notes.trim_end());
                out.push_str("\n\n");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(human(12_345_678.0), "12.35 M");
        assert_eq!(human(31_664.0), "31,664");
        assert_eq!(human(5743.0), "5743");
        assert_eq!(human(13.14), "13.1");
        assert_eq!(human(1.386), "1.39");
    }

    #[test]
    fn verdicts_follow_the_target() {
        assert_eq!(Row::new("a", 5.0, "", Target::AtLeast(4.0)).verdict(), "pass");
        assert_eq!(Row::new("a", 50.0, "", Target::AtMost(48.0)).verdict(), "**miss**");
        assert_eq!(Row::new("a", 5.0, "", Target::Info).verdict(), "info");
        assert!(today().len() == 10);
    }
}
