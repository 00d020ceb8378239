//! Token names in compiled plans, resolved to catalog ids once rather than hashed on every row.
//!
//! A plan names labels, relationship types and property keys; the catalog maps names to ids under a lock and a
//! hash. Ids never change once interned, so a [`Token`] remembers the id it found, tagged with the catalog it
//! came from: cached plans outlive a query, and an engine may serve more than one store. A name that does not
//! exist yet is looked up again next time (a later write may create it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use plexus_storage::catalog::Catalog;
use plexus_storage::TokenKind;

pub(crate) struct Token {
    name: Arc<str>,
    /// `catalog uid << 32 | (id + 1)`, or 0 before the first successful lookup.
    resolved: AtomicU64,
}

impl Token {
    pub fn new(name: impl Into<Arc<str>>) -> Token {
        Token { name: name.into(), resolved: AtomicU64::new(0) }
    }

    /// The name, shared.
    pub fn name(&self) -> &Arc<str> {
        &self.name
    }

    #[inline]
    fn cached(&self, catalog: &Catalog) -> Option<u32> {
        let cached = self.resolved.load(Ordering::Relaxed);
        (cached != 0 && (cached >> 32) as u32 == catalog.uid()).then(|| cached as u32 - 1)
    }

    fn remember(&self, catalog: &Catalog, id: u32) {
        self.resolved.store(u64::from(catalog.uid()) << 32 | (u64::from(id) + 1), Ordering::Relaxed);
    }

    /// The id of this name in `catalog`, if it exists there.
    #[inline]
    pub fn resolve(&self, catalog: &Catalog, kind: TokenKind) -> Option<u32> {
        if let Some(id) = self.cached(catalog) {
            return Some(id);
        }
        let id = catalog.lookup(kind, &self.name)?;
        self.remember(catalog, id);
        Some(id)
    }

    /// The id of this name in `catalog`, creating the token if it does not exist (for writes).
    #[inline]
    pub fn intern(&self, catalog: &Catalog, kind: TokenKind) -> u32 {
        if let Some(id) = self.cached(catalog) {
            return id;
        }
        let id = catalog.intern(kind, &self.name);
        self.remember(catalog, id);
        id
    }
}

impl Clone for Token {
    fn clone(&self) -> Token {
        Token { name: self.name.clone(), resolved: AtomicU64::new(self.resolved.load(Ordering::Relaxed)) }
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.name, f)
    }
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl std::ops::Deref for Token {
    type Target = str;

    fn deref(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_per_catalog_and_retries_missing_names() {
        let (a, b) = (Catalog::new(), Catalog::new());
        b.intern(TokenKind::PropKey, "other");
        let t = Token::new("name");
        assert_eq!(t.resolve(&a, TokenKind::PropKey), None);
        let id_a = a.intern(TokenKind::PropKey, "name");
        assert_eq!(t.resolve(&a, TokenKind::PropKey), Some(id_a));
        assert_eq!(t.resolve(&b, TokenKind::PropKey), None, "a cached id is not used for another catalog");
        let id_b = b.intern(TokenKind::PropKey, "name");
        assert_ne!(id_a, id_b);
        assert_eq!(t.resolve(&b, TokenKind::PropKey), Some(id_b));
        assert_eq!(t.resolve(&a, TokenKind::PropKey), Some(id_a));
        let fresh = Catalog::new();
        assert_eq!(t.intern(&fresh, TokenKind::PropKey), fresh.lookup(TokenKind::PropKey, "name").unwrap());
    }
}
