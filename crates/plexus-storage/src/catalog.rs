//! The token catalog: interned names of labels, relationship types and property keys.
//!
//! Tokens are created outside transactions and never removed, as in most graph databases: an aborted transaction
//! may leave an unused token behind, which is harmless. Each token reaches the write-ahead log before the first
//! commit that uses it (the committer logs every token created since the last commit), so recovery always knows
//! every name a logged operation refers to.

use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;

use crate::ids::{LabelId, PropKeyId, TypeId};

/// Which of the three token namespaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Label = 0,
    Type = 1,
    PropKey = 2,
}

impl TokenKind {
    pub fn from_u8(b: u8) -> Option<TokenKind> {
        match b {
            0 => Some(TokenKind::Label),
            1 => Some(TokenKind::Type),
            2 => Some(TokenKind::PropKey),
            _ => None,
        }
    }
}

#[derive(Default, Debug)]
struct Namespace {
    names: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, u32>,
    /// How many of `names` have been written to the log.
    logged: usize,
}

impl Namespace {
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        let name: Arc<str> = Arc::from(name);
        self.names.push(name.clone());
        self.ids.insert(name, id);
        id
    }
}

/// Interned names; shared by every snapshot of a database.
#[derive(Debug)]
pub struct Catalog {
    spaces: RwLock<[Namespace; 3]>,
    /// Tells catalogs apart, so that a compiled query can cache the ids it resolved (ids never change once
    /// interned) and still notice when it runs against another database.
    uid: u32,
}

impl Default for Catalog {
    fn default() -> Self {
        static NEXT_UID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        Catalog { spaces: Default::default(), uid: NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed) }
    }
}

impl Catalog {
    pub fn new() -> Self {
        Self::default()
    }

    /// A number no other catalog of this process has.
    pub fn uid(&self) -> u32 {
        self.uid
    }

    pub fn intern(&self, kind: TokenKind, name: &str) -> u32 {
        if let Some(id) = self.lookup(kind, name) {
            return id;
        }
        self.spaces.write()[kind as usize].intern(name)
    }

    pub fn lookup(&self, kind: TokenKind, name: &str) -> Option<u32> {
        self.spaces.read()[kind as usize].ids.get(name).copied()
    }

    pub fn name(&self, kind: TokenKind, id: u32) -> Option<Arc<str>> {
        self.spaces.read()[kind as usize].names.get(id as usize).cloned()
    }

    /// Number of tokens of `kind`; valid ids are below it.
    pub fn count(&self, kind: TokenKind) -> usize {
        self.spaces.read()[kind as usize].names.len()
    }

    /// Checks that every label, type and property key an operation names exists, so that no id from a caller or
    /// a damaged file can make storage size a table by it.
    pub fn check_op(&self, op: &crate::ops::Op) -> Result<(), String> {
        self.check_op_cached(op, &mut [0; 3])
    }

    /// [`Catalog::check_op`] against `counts`, token counts seen before; tokens are never removed, so the lock
    /// is taken only when an id is not below a count already seen.
    pub fn check_op_cached(&self, op: &crate::ops::Op, counts: &mut [usize; 3]) -> Result<(), String> {
        use crate::ops::Op;
        let mut known = |kind: TokenKind, id: u32| -> Result<(), String> {
            if (id as usize) < counts[kind as usize] {
                return Ok(());
            }
            counts[kind as usize] = self.spaces.read()[kind as usize].names.len();
            if (id as usize) < counts[kind as usize] {
                Ok(())
            } else {
                Err(format!("{kind:?} token {id} does not exist"))
            }
        };
        match op {
            Op::Token { .. } | Op::CreateEmptyNodes { .. } | Op::DeleteNode { .. } | Op::DeleteRel { .. } => Ok(()),
            Op::CreateNode { labels, props, .. } => {
                labels.iter().try_for_each(|l| known(TokenKind::Label, l.0))?;
                // The map is sorted by key: its last key is the largest.
                match crate::records::props_entries(props).last() {
                    Some((k, _)) => known(TokenKind::PropKey, k.0),
                    None => Ok(()),
                }
            }
            Op::SetNodeProp { key, .. } | Op::SetRelProp { key, .. } => known(TokenKind::PropKey, key.0),
            Op::AddLabel { label, .. } | Op::RemoveLabel { label, .. } => known(TokenKind::Label, label.0),
            Op::CreateRel { ty, props, .. } => {
                known(TokenKind::Type, ty.0)?;
                props.iter().try_for_each(|(k, _)| known(TokenKind::PropKey, k.0))
            }
            Op::DeclareUniqueKey { label, key, .. }
            | Op::DropUniqueKey { label, key }
            | Op::CreateIndex { label, key, .. }
            | Op::DropIndex { label, key } => {
                known(TokenKind::Label, label.0)?;
                known(TokenKind::PropKey, key.0)
            }
            Op::CreateRelIndex { ty, key, .. } | Op::DropRelIndex { ty, key } => {
                known(TokenKind::Type, ty.0)?;
                known(TokenKind::PropKey, key.0)
            }
            Op::CreateCompositeIndex { label, keys, .. } | Op::DropCompositeIndex { label, keys } => {
                known(TokenKind::Label, label.0)?;
                keys.iter().try_for_each(|k| known(TokenKind::PropKey, k.0))
            }
        }
    }

    pub fn names(&self, kind: TokenKind) -> Vec<Arc<str>> {
        self.spaces.read()[kind as usize].names.clone()
    }

    pub fn label(&self, name: &str) -> LabelId {
        LabelId(self.intern(TokenKind::Label, name))
    }
    pub fn rel_type(&self, name: &str) -> TypeId {
        TypeId(self.intern(TokenKind::Type, name))
    }
    pub fn prop_key(&self, name: &str) -> PropKeyId {
        PropKeyId(self.intern(TokenKind::PropKey, name))
    }

    /// Tokens created since the last call, marking them logged. Called by the committer under its lock.
    pub fn take_unlogged(&self) -> Vec<(TokenKind, u32, Arc<str>)> {
        let mut spaces = self.spaces.write();
        let mut out = Vec::new();
        for (i, space) in spaces.iter_mut().enumerate() {
            let kind = TokenKind::from_u8(i as u8).expect("three namespaces");
            for id in space.logged..space.names.len() {
                out.push((kind, id as u32, space.names[id].clone()));
            }
            space.logged = space.names.len();
        }
        out
    }

    /// Undoes [`Catalog::take_unlogged`] when the commit that took the tokens failed before logging them.
    pub fn return_unlogged(&self, tokens: &[(TokenKind, u32, Arc<str>)]) {
        let mut spaces = self.spaces.write();
        for (kind, id, _) in tokens {
            let space = &mut spaces[*kind as usize];
            space.logged = space.logged.min(*id as usize);
        }
    }

    /// Every token, for a checkpoint.
    pub fn all(&self) -> Vec<(TokenKind, u32, Arc<str>)> {
        let spaces = self.spaces.read();
        let mut out = Vec::new();
        for (i, space) in spaces.iter().enumerate() {
            let kind = TokenKind::from_u8(i as u8).expect("three namespaces");
            for (id, name) in space.names.iter().enumerate() {
                out.push((kind, id as u32, name.clone()));
            }
        }
        out
    }

    /// Restores a token with a known id (recovery). Ids must arrive densely per namespace.
    pub fn restore(&self, kind: TokenKind, id: u32, name: &str) -> Result<(), String> {
        let mut spaces = self.spaces.write();
        let space = &mut spaces[kind as usize];
        match space.names.get(id as usize) {
            Some(existing) if &**existing == name => Ok(()),
            Some(existing) => Err(format!("token {id} is both '{existing}' and '{name}'")),
            None if id as usize == space.names.len() => {
                space.intern(name);
                space.logged = space.names.len();
                Ok(())
            }
            None => Err(format!("token {id} ('{name}') arrived out of order")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_logged_once() {
        let c = Catalog::new();
        let a = c.label("Person");
        assert_eq!(c.label("Person"), a);
        assert_eq!(c.take_unlogged().len(), 1);
        assert!(c.take_unlogged().is_empty());
        c.rel_type("KNOWS");
        let t = c.take_unlogged();
        assert_eq!(t[0].0, TokenKind::Type);
    }

    #[test]
    fn restore_rejects_conflicts() {
        let c = Catalog::new();
        c.restore(TokenKind::Label, 0, "A").unwrap();
        c.restore(TokenKind::Label, 0, "A").unwrap();
        assert!(c.restore(TokenKind::Label, 0, "B").is_err());
        assert!(c.restore(TokenKind::Label, 5, "C").is_err());
    }
}
