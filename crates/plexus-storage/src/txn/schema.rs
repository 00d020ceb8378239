//! The schema a write transaction declares: unique keys, property indexes (node, relationship and composite)
//! and their removal, each a logged operation like any write. Declaring or dropping a unique key conflicts with
//! every concurrent committer (it changes which writes are allowed); an index only with transactions creating or
//! dropping the same index, since replaying other writers' operations maintains it.

use super::{hash_of, WriteKey, WriteTxn};
use crate::error::Result;
use crate::ids::{LabelId, PropKeyId, TypeId};
use crate::ops::Op;

impl WriteTxn {
    /// Declares `(label, key)` a unique key: lookups by it become hash probes and duplicates are refused.
    pub fn declare_unique_key(&mut self, label: LabelId, key: PropKeyId) -> Result<()> {
        self.declare_named_unique_key(label, key, None)
    }

    /// [`WriteTxn::declare_unique_key`] with the name its creator gave it, if any, kept with it (and durably):
    /// a name some index or unique key already has is refused.
    pub fn declare_named_unique_key(&mut self, label: LabelId, key: PropKeyId, name: Option<&str>) -> Result<()> {
        self.record(Op::DeclareUniqueKey { label, key, name: name.map(str::to_owned) })?;
        self.schema_change = true;
        Ok(())
    }

    pub fn drop_unique_key(&mut self, label: LabelId, key: PropKeyId) -> Result<()> {
        self.record(Op::DropUniqueKey { label, key })?;
        self.schema_change = true;
        Ok(())
    }

    /// Creates a property index on `(label, key)`, built over the nodes that exist now and maintained by every
    /// later write; fails if it exists. Two transactions creating or dropping the same index conflict; writers
    /// of data do not conflict with either (replaying their operations maintains the index, and replaying the
    /// creation indexes what they wrote).
    pub fn create_index(&mut self, label: LabelId, key: PropKeyId) -> Result<()> {
        self.create_named_index(label, key, None)
    }

    /// [`WriteTxn::create_index`] with the name its creator gave it, if any, kept with it (and durably): a name
    /// some index or unique key already has is refused.
    pub fn create_named_index(&mut self, label: LabelId, key: PropKeyId, name: Option<&str>) -> Result<()> {
        self.record(Op::CreateIndex { label, key, name: name.map(str::to_owned) })?;
        self.writes.push(WriteKey::Index(hash_of((label, key))));
        Ok(())
    }

    /// Drops the property index on `(label, key)`; fails if there is none.
    pub fn drop_index(&mut self, label: LabelId, key: PropKeyId) -> Result<()> {
        self.record(Op::DropIndex { label, key })?;
        self.writes.push(WriteKey::Index(hash_of((label, key))));
        Ok(())
    }

    /// Creates a property index on the relationships of type `ty` holding `key`, named `name` if given, built
    /// over those that exist now and maintained by every later write; fails if it exists or the name is taken.
    /// Conflicts as [`WriteTxn::create_index`] does.
    pub fn create_rel_index(&mut self, ty: TypeId, key: PropKeyId, name: Option<&str>) -> Result<()> {
        self.record(Op::CreateRelIndex { ty, key, name: name.map(str::to_owned), unique: false })?;
        self.writes.push(WriteKey::Index(hash_of((u8::MAX, ty, key))));
        Ok(())
    }

    /// Declares that no two relationships of type `ty` share a value of `key`: a relationship property index
    /// that refuses duplicates, named `name` if given; fails while two relationships share a value, if the
    /// index exists, or the name is taken. Dropped with [`WriteTxn::drop_rel_index`].
    pub fn create_rel_unique(&mut self, ty: TypeId, key: PropKeyId, name: Option<&str>) -> Result<()> {
        self.record(Op::CreateRelIndex { ty, key, name: name.map(str::to_owned), unique: true })?;
        self.writes.push(WriteKey::Index(hash_of((u8::MAX, ty, key))));
        Ok(())
    }

    /// Drops the relationship property index on `(ty, key)`; fails if there is none.
    pub fn drop_rel_index(&mut self, ty: TypeId, key: PropKeyId) -> Result<()> {
        self.record(Op::DropRelIndex { ty, key })?;
        self.writes.push(WriteKey::Index(hash_of((u8::MAX, ty, key))));
        Ok(())
    }

    /// Creates an index on the properties `keys` (two or more, distinct, in that order) of the nodes of `label`,
    /// named `name` if given, answering an equality on all of them; fails if it exists or the name is taken.
    /// Conflicts as [`WriteTxn::create_index`] does.
    pub fn create_composite_index(&mut self, label: LabelId, keys: &[PropKeyId], name: Option<&str>) -> Result<()> {
        let name = name.map(str::to_owned);
        self.record(Op::CreateCompositeIndex { label, keys: keys.to_vec(), name, unique: false })?;
        self.writes.push(WriteKey::Index(hash_of((label, keys))));
        Ok(())
    }

    /// Declares that no two nodes of `label` share all the values of `keys` (two or more): a composite index
    /// that refuses duplicates, named `name` if given; fails while two nodes share them, if the index exists, or
    /// the name is taken. Dropped with [`WriteTxn::drop_composite_index`].
    pub fn create_composite_unique(&mut self, label: LabelId, keys: &[PropKeyId], name: Option<&str>) -> Result<()> {
        let name = name.map(str::to_owned);
        self.record(Op::CreateCompositeIndex { label, keys: keys.to_vec(), name, unique: true })?;
        self.writes.push(WriteKey::Index(hash_of((label, keys))));
        Ok(())
    }

    /// Drops the composite index on `keys` of `label`; fails if there is none.
    pub fn drop_composite_index(&mut self, label: LabelId, keys: &[PropKeyId]) -> Result<()> {
        self.record(Op::DropCompositeIndex { label, keys: keys.to_vec() })?;
        self.writes.push(WriteKey::Index(hash_of((label, keys))));
        Ok(())
    }
}
