//! The id spaces of the node groups: maps from a node file's external ids to node numbers, built once every
//! group is parsed, and the lookups relationship ends make through them.

use super::*;
use crate::edgelist::names::{hash_name, NameNumbers};

/// A row whose id an earlier row of its id space has (skipped with `skip_duplicate_nodes`).
pub struct Duplicate {
    pub group: usize,
    pub row: usize,
    pub message: String,
}

/// An id space's map from external id to node id.
enum SpaceMap {
    Int(FxHashMap<i64, u64>),
    /// Integer ids dense enough for a direct table (`u64::MAX`: no node): one cache miss per lookup.
    Dense {
        min: i64,
        table: Vec<u64>,
    },
    /// String ids numbered in one compact table (a tag of the hash beside each record's place, the names in one
    /// arena: two cache misses to number a name, where a map keyed by slices of the input took three) and each
    /// number's node (one more read, not requested ahead).
    Str {
        names: NameNumbers,
        nodes: Vec<u64>,
    },
}

impl SpaceMap {
    /// The node of string id `text`.
    #[inline]
    fn get_str(&self, text: &[u8]) -> Option<u64> {
        match self {
            SpaceMap::Str { names, nodes } => names.find(text, hash_name(text)).map(|k| nodes[k as usize]),
            _ => None,
        }
    }

    /// Turns a hash map of integer ids into a direct table when the ids span at most four slots per id.
    fn densify(&mut self) {
        let SpaceMap::Int(map) = self else { return };
        let (Some(&min), Some(&max)) = (map.keys().min(), map.keys().max()) else { return };
        let span = max as i128 - min as i128 + 1;
        if span > (4 * map.len() as i128).max(1 << 16) {
            return;
        }
        let mut table = vec![u64::MAX; span as usize];
        for (&id, &node) in map.iter() {
            table[(id - min) as usize] = node;
        }
        *self = SpaceMap::Dense { min, table };
    }

    #[inline]
    fn get_int(&self, id: i64) -> Option<u64> {
        match self {
            SpaceMap::Int(m) => m.get(&id).copied(),
            SpaceMap::Dense { min, table } => {
                let at = (id as i128 - *min as i128) as u128;
                table.get(usize::try_from(at).ok()?).copied().filter(|&n| n != u64::MAX)
            }
            SpaceMap::Str { .. } => None,
        }
    }
}

/// An id as given, for lookups outside the parsed files (incremental mode).
pub enum ExternalId<'t> {
    Int(i64),
    Str(&'t str),
}

/// Looks up ids the parsed node files do not hold: `(space name, id)` to a node id.
pub type Fallback<'f> = &'f (dyn Fn(Option<&str>, ExternalId) -> Option<u64> + Sync);

/// What a [`Fallback`] answers for an id that names more than one node of the database (in the global id space,
/// under several labels): a relationship to it is refused rather than guessed at.
pub const AMBIGUOUS: u64 = u64::MAX;

/// The id spaces of an import: external id to node id.
pub struct IdMaps {
    pub(super) names: Vec<Option<String>>,
    maps: Vec<SpaceMap>,
    id_type: IdType,
    /// Per space of string ids, the integers its ids read as (made when a hint first needs them).
    as_integers: Vec<std::sync::OnceLock<plexus_storage::fxhash::FxHashSet<i64>>>,
}

impl IdMaps {
    pub(super) fn space_index(&self, name: Option<&str>) -> Option<usize> {
        self.names.iter().position(|n| n.as_deref() == name)
    }

    /// Builds the maps; `node_of(group, row)` gives each row's node id. A duplicate id in a space is an error,
    /// or with `skip_duplicates` a row left out of the maps (the first row with the id keeps it) and returned.
    pub fn build(
        groups: &[NodeGroup<'_>],
        id_type: IdType,
        skip_duplicates: bool,
        node_of: impl Fn(usize, usize) -> u64,
    ) -> Result<(IdMaps, Vec<Duplicate>), String> {
        use std::collections::hash_map::Entry;
        let mut maps = IdMaps { names: Vec::new(), maps: Vec::new(), id_type, as_integers: Vec::new() };
        let mut duplicates = Vec::new();
        // Where each space's ids came from, to name both places of a duplicate.
        let mut owner: Vec<Vec<(usize, usize)>> = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            if group.header.id.is_none() {
                continue;
            }
            let name = group.header.space().map(String::from);
            let s = match maps.space_index(name.as_deref()) {
                Some(s) => s,
                None => {
                    maps.names.push(name);
                    maps.maps.push(match id_type {
                        IdType::Integer => SpaceMap::Int(FxHashMap::default()),
                        IdType::String => SpaceMap::Str { names: NameNumbers::with_capacity(1024), nodes: Vec::new() },
                    });
                    owner.push(Vec::new());
                    maps.maps.len() - 1
                }
            };
            owner[s].push((g, group.len()));
            let mut duplicate = |row: usize, existing: u64| {
                // The group and row that hold node `existing` (rows of a group are numbered consecutively).
                let first = owner[s]
                    .iter()
                    .find_map(|&(g2, len)| {
                        let r = existing.checked_sub(node_of(g2, 0)).filter(|&r| r < len as u64)? as usize;
                        (node_of(g2, r) == existing).then(|| groups[g2].place(r))
                    })
                    .unwrap_or_default();
                let shown = match group.id_value(row) {
                    Some(Value::Int(i)) => i.to_string(),
                    Some(Value::String(s)) => format!("'{s}'"),
                    _ => String::new(),
                };
                let space = group.header.space().map_or("the global id space".to_string(), |s| format!("id space {s}"));
                if skip_duplicates {
                    let message = format!("duplicate node id {shown} in {space}: skipped, the node of {first} is kept");
                    duplicates.push(Duplicate { group: g, row, message });
                    return Ok(());
                }
                let column = group.header.id.map_or(String::new(), |i| format!(" (field {} of each line)", i + 1));
                Err(format!(
                    "duplicate node id {shown} in {space}{column}: {first} and {} (--skip-duplicate-nodes keeps the \
                     first node with an id and skips the others)",
                    group.place(row)
                ))
            };
            match (&mut maps.maps[s], &group.ids) {
                (SpaceMap::Int(map), Ids::Int(ids)) => {
                    map.reserve(ids.len());
                    for (row, &id) in ids.iter().enumerate() {
                        match map.entry(id) {
                            Entry::Occupied(e) => duplicate(row, *e.get())?,
                            Entry::Vacant(e) => {
                                e.insert(node_of(g, row));
                            }
                        }
                    }
                }
                (SpaceMap::Str { names, nodes }, Ids::Str(ids)) => {
                    for (row, id) in ids.iter().enumerate() {
                        let known = names.len();
                        let k = names.number(id, hash_name(id)) as usize;
                        if k < known {
                            duplicate(row, nodes[k])?;
                        } else {
                            nodes.push(node_of(g, row));
                        }
                    }
                }
                _ => unreachable!("one id type per import"),
            }
        }
        for map in &mut maps.maps {
            map.densify();
        }
        maps.as_integers = maps.maps.iter().map(|_| std::sync::OnceLock::new()).collect();
        Ok((maps, duplicates))
    }

    /// Whether space `s` holds `text` as an id.
    fn holds(&self, s: usize, text: &[u8]) -> bool {
        match &self.maps[s] {
            map @ SpaceMap::Str { .. } => map.get_str(text).is_some(),
            map => parse_int(text).is_some_and(|i| map.get_int(i).is_some()),
        }
    }

    /// Why an unknown id might be unknown, when something says so: the same id read as the other id type finds
    /// a node (of this import, or of the database), or another id space holds it.
    pub(super) fn hint(
        &self,
        space: Option<usize>,
        name: Option<&str>,
        text: &[u8],
        fallback: Option<Fallback>,
    ) -> String {
        let Ok(s) = std::str::from_utf8(text) else { return String::new() };
        match self.id_type {
            IdType::String => {
                if let Some(i) = parse_int(text) {
                    let in_files = space.is_some_and(|sp| {
                        let ints = self.as_integers[sp].get_or_init(|| match &self.maps[sp] {
                            SpaceMap::Str { names, .. } => names.names().filter_map(parse_int).collect(),
                            _ => Default::default(),
                        });
                        ints.contains(&i)
                    });
                    let in_database = !in_files && fallback.is_some_and(|f| f(name, ExternalId::Int(i)).is_some());
                    if in_files {
                        return format!(
                            " (ids are read as strings, and a node id of the files is {i} as an integer: add \
                             --id-type integer to read them as integers)"
                        );
                    }
                    if in_database {
                        return format!(
                            " (ids are read as strings, and the database has a node with the integer id {i}: add \
                             --id-type integer)"
                        );
                    }
                }
            }
            IdType::Integer => {
                if fallback.is_some_and(|f| f(name, ExternalId::Str(s)).is_some()) {
                    return format!(
                        " (ids are read as integers, and the database has a node with the string id '{s}': leave \
                         out --id-type integer)"
                    );
                }
            }
        }
        let others: Vec<String> = (0..self.maps.len())
            .filter(|&o| Some(o) != space && self.holds(o, text))
            .map(|o| self.names[o].as_deref().map_or("the global id space".to_string(), |n| format!("id space {n}")))
            .collect();
        if others.is_empty() {
            return String::new();
        }
        format!(" (it is a node id in {})", others.join(" and "))
    }

    /// The key [`IdMaps::prefetch_first`] and [`IdMaps::prefetch_second`] take for id `text`: its hash for string
    /// ids, its value for integer ids (`None` when it is none).
    #[inline]
    pub(super) fn prefetch_key(&self, text: &[u8]) -> Option<u64> {
        match self.id_type {
            IdType::String => Some(hash_name(text)),
            IdType::Integer => parse_int(text).map(|i| i as u64),
        }
    }

    /// Whether [`IdMaps::prefetch_first`] requests anything for ids of `space` (a hash map of integers is left
    /// alone): if neither end's space does, reading ahead would only cost.
    pub(super) fn prefetches(&self, space: Option<usize>) -> bool {
        matches!(space.map(|s| &self.maps[s]), Some(SpaceMap::Str { .. } | SpaceMap::Dense { .. }))
    }

    /// Requests the line that the lookup of the id of `key` ([`IdMaps::prefetch_key`]) in `space` reads first:
    /// a string id's slot, an integer id's entry of a direct table (a hash map of integers is left alone).
    #[inline]
    pub(super) fn prefetch_first(&self, space: Option<usize>, key: u64) {
        match space.map(|s| &self.maps[s]) {
            Some(SpaceMap::Str { names, .. }) => names.prefetch_slot(key),
            Some(SpaceMap::Dense { min, table }) => {
                if let Ok(i) = usize::try_from((key as i64 as i128) - (*min as i128)) {
                    plexus_storage::prefetch::prefetch_at(table, i);
                }
            }
            _ => {}
        }
    }

    /// Once [`IdMaps::prefetch_first`]'s line has arrived: requests the line read second (a string id's record).
    #[inline]
    pub(super) fn prefetch_second(&self, space: Option<usize>, key: u64) {
        if let Some(SpaceMap::Str { names, .. }) = space.map(|s| &self.maps[s]) {
            names.prefetch_record(key);
        }
    }

    pub(super) fn resolve(
        &self,
        space: Option<usize>,
        name: Option<&str>,
        text: &[u8],
        fallback: Option<Fallback>,
    ) -> Lookup {
        match self.id_type {
            IdType::Integer => {
                let Some(id) = parse_int(text) else { return Lookup::Malformed };
                if let Some(n) = space.and_then(|s| self.maps[s].get_int(id)) {
                    return Lookup::Found(n);
                }
                fallback.and_then(|f| f(name, ExternalId::Int(id))).map_or(Lookup::Unknown, Lookup::found)
            }
            IdType::String => {
                if let Some(n) = space.and_then(|s| self.maps[s].get_str(text)) {
                    return Lookup::Found(n);
                }
                let Ok(s) = std::str::from_utf8(text) else { return Lookup::Unknown };
                fallback.and_then(|f| f(name, ExternalId::Str(s))).map_or(Lookup::Unknown, Lookup::found)
            }
        }
    }
}

pub(super) enum Lookup {
    Found(u64),
    Unknown,
    Malformed,
    /// Several nodes of the database have the id (see [`AMBIGUOUS`]).
    Ambiguous,
}

impl Lookup {
    fn found(node: u64) -> Lookup {
        if node == AMBIGUOUS {
            Lookup::Ambiguous
        } else {
            Lookup::Found(node)
        }
    }
}
