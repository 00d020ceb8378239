//! Traversals written against the public API, shared by the command line, tests and benchmarks.

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::{Direction, NodeId, ReadTxn, TypeFilter, TypeId};

/// GuancialeDB's recommendation: the items liked by people who like what `person` likes, excluding what
/// `person` already likes, ranked by how many such likes point at them (ties by id); the top `limit`.
pub fn recommend(snapshot: &ReadTxn, person: NodeId, likes: TypeId, limit: usize) -> Vec<(NodeId, u64)> {
    let only = [likes];
    let filter = TypeFilter::Only(&only);
    let mine = snapshot.neighbours(person, Direction::Out, filter);
    let mut counts: HashMap<NodeId, u64> = HashMap::new();
    for &item in &mine {
        let _ = snapshot.visit_rels::<()>(item, Direction::In, filter, |liker| {
            if liker.nbr != person {
                let _ = snapshot.visit_rels::<()>(liker.nbr, Direction::Out, filter, |other| {
                    *counts.entry(other.nbr).or_insert(0) += 1;
                    ControlFlow::Continue(())
                });
            }
            ControlFlow::Continue(())
        });
    }
    let mut ranked: Vec<(NodeId, u64)> =
        counts.into_iter().filter(|(item, _)| mine.binary_search(item).is_err()).collect();
    let top = limit.min(ranked.len());
    if top == 0 {
        return Vec::new();
    }
    ranked.select_nth_unstable_by(top - 1, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(top);
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Database;

    #[test]
    fn recommends_what_similar_people_like() {
        let db = Database::in_memory();
        let mut tx = db.write();
        let (item, person, likes) = (tx.label("Item"), tx.label("Person"), tx.rel_type("LIKES"));
        let items: Vec<NodeId> = (0..5).map(|_| tx.create_node(&[item], vec![]).unwrap()).collect();
        let people: Vec<NodeId> = (0..3).map(|_| tx.create_node(&[person], vec![]).unwrap()).collect();
        // me likes 0; p1 likes 0,1,2; p2 likes 0,2,3.
        for (p, is) in [(0, vec![0]), (1, vec![0, 1, 2]), (2, vec![0, 2, 3])] {
            for i in is {
                tx.create_rel(people[p], likes, items[i], vec![]).unwrap();
            }
        }
        tx.commit().unwrap();
        let r = db.read();
        let recs = recommend(&r, people[0], likes, 10);
        assert_eq!(recs, vec![(items[2], 2), (items[1], 1), (items[3], 1)]);
        assert_eq!(recommend(&r, people[0], likes, 1), vec![(items[2], 2)]);
    }
}
