//! Notifications in a result's summary, filtered as the client asked (Bolt 5.2+: `notifications_minimum_severity`
//! and `notifications_disabled_categories` in HELLO, overridden by BEGIN or an auto-commit RUN).

use plexus::cypher::notices::{Notification, Severity};

use crate::packstream::{map, Ps};

/// Which notifications a client wants ([`Filter::all`] until it says otherwise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// `None`: none at all (`OFF`).
    minimum: Option<Severity>,
    disabled: Vec<String>,
}

impl Filter {
    pub fn all() -> Filter {
        Filter { minimum: Some(Severity::Information), disabled: Vec::new() }
    }

    /// `base` with what `extra` (a HELLO, BEGIN or RUN metadata map) says instead.
    pub fn from_extra(base: &Filter, extra: &Ps) -> Filter {
        let mut filter = base.clone();
        match extra.get("notifications_minimum_severity").and_then(Ps::as_str) {
            Some(s) if s.eq_ignore_ascii_case("OFF") => filter.minimum = None,
            Some(s) if s.eq_ignore_ascii_case("WARNING") => filter.minimum = Some(Severity::Warning),
            Some(s) if s.eq_ignore_ascii_case("INFORMATION") => filter.minimum = Some(Severity::Information),
            _ => {}
        }
        if let Some(Ps::List(categories)) = extra.get("notifications_disabled_categories") {
            filter.disabled = categories.iter().filter_map(Ps::as_str).map(str::to_ascii_uppercase).collect();
        }
        filter
    }

    fn admits(&self, n: &Notification) -> bool {
        self.minimum.is_some_and(|m| n.severity >= m) && !self.disabled.iter().any(|c| c == n.category)
    }

    /// The summary's `notifications` list, or `None` when there is nothing to send.
    pub fn summary(&self, notifications: &[Notification]) -> Option<Ps> {
        let kept: Vec<Ps> = notifications.iter().filter(|n| self.admits(n)).map(encode).collect();
        (!kept.is_empty()).then_some(Ps::List(kept))
    }
}

fn encode(n: &Notification) -> Ps {
    map([
        ("code", Ps::String(n.code.into())),
        ("title", Ps::String(n.title.into())),
        ("description", Ps::String(n.description.to_string())),
        ("severity", Ps::String(n.severity.name().into())),
        ("category", Ps::String(n.category.into())),
        (
            "position",
            map([
                ("offset", Ps::Int(n.position.offset as i64)),
                ("line", Ps::Int(n.position.line as i64)),
                ("column", Ps::Int(n.position.column as i64)),
            ]),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus::cypher::notices::NotificationPosition;

    fn note(severity: Severity, category: &'static str) -> Notification {
        Notification {
            code: "Neo.ClientNotification.Statement.X",
            title: "t",
            description: "d".into(),
            severity,
            category,
            position: NotificationPosition { offset: 0, line: 1, column: 1 },
        }
    }

    #[test]
    fn the_client_chooses_what_it_hears() {
        let notes = [note(Severity::Warning, "UNRECOGNIZED"), note(Severity::Information, "PERFORMANCE")];
        let count = |f: &Filter| match f.summary(&notes) {
            Some(Ps::List(l)) => l.len(),
            _ => 0,
        };
        let all = Filter::all();
        assert_eq!(count(&all), 2);
        let extra = |entries: Vec<(&str, Ps)>| Ps::Map(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
        let warnings =
            Filter::from_extra(&all, &extra(vec![("notifications_minimum_severity", Ps::String("WARNING".into()))]));
        assert_eq!(count(&warnings), 1);
        let off = Filter::from_extra(&all, &extra(vec![("notifications_minimum_severity", Ps::String("OFF".into()))]));
        assert_eq!(count(&off), 0);
        let categories = Ps::List(vec![Ps::String("unrecognized".into())]);
        let no_unknown = Filter::from_extra(&all, &extra(vec![("notifications_disabled_categories", categories)]));
        assert_eq!(count(&no_unknown), 1);
        // A RUN that says nothing keeps the session's choice.
        assert_eq!(Filter::from_extra(&off, &extra(vec![])), off);
    }
}
