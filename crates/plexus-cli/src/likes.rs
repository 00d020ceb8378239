//! The GuancialeDB items/people/likes graph: generation and the recommendation traversal, for `plexus demo`.

use std::time::Instant;

use plexus::algo::recommend;
use plexus::random::SplitMix;
use plexus::{Database, NodeId, Result, Value};

pub fn demo(
    db: &Database,
    items: usize,
    people: usize,
    likes_per_person: usize,
    seed: u64,
) -> std::result::Result<(), String> {
    let snapshot = db.read();
    let existing = snapshot.label_id("Person").map_or(0, |l| snapshot.label_count(l));
    if existing == 0 && snapshot.node_count() > 0 {
        // Data of another kind: the demo's graph is not mixed into it.
        return Err(format!(
            "this database holds {} nodes and no :Person: give --data a new directory for the demo",
            snapshot.node_count()
        ));
    }
    if existing == 0 {
        build(db, items, people, likes_per_person, seed).map_err(|e| e.to_string())?;
    } else {
        eprintln!(
            "plexus demo: the database already holds {existing} :Person nodes, so nothing is created (the sizes \
             given apply to a new database) and the traversal runs on what is there"
        );
    }
    traverse(db)
}

/// Creates the items, the people and their likes in one transaction.
fn build(db: &Database, items: usize, people: usize, likes_per_person: usize, seed: u64) -> Result<()> {
    let start = Instant::now();
    let mut tx = db.write();
    let (item, person, likes, id) = (tx.label("Item"), tx.label("Person"), tx.rel_type("LIKES"), tx.prop_key("id"));
    tx.declare_unique_key(item, id)?;
    tx.declare_unique_key(person, id)?;
    let item_ids: Vec<NodeId> =
        (0..items).map(|i| tx.create_node(&[item], vec![(id, Value::Int(i as i64))])).collect::<Result<_>>()?;
    let mut rng = SplitMix(seed);
    let mut liked = std::collections::BTreeSet::new();
    for p in 0..people {
        let me = tx.create_node(&[person], vec![(id, Value::Int(p as i64))])?;
        // `likes_per_person` distinct items, uniformly (Floyd's sampling): a person likes an item once.
        liked.clear();
        for j in items - likes_per_person..items {
            if !liked.insert(rng.below(j as u64 + 1) as usize) {
                liked.insert(j);
            }
        }
        for &item in &liked {
            tx.upsert_edge(me, likes, item_ids[item], vec![])?;
        }
    }
    let version = tx.commit()?;
    println!(
        "created {items} items, {people} people and their likes in {:.2?} (commit version {version})",
        start.elapsed()
    );
    Ok(())
}

/// The recommendation for person 0, then the traversal's rate over every person.
fn traverse(db: &Database) -> std::result::Result<(), String> {
    let snapshot = db.read();
    let (Some(person), Some(likes), Some(id)) =
        (snapshot.label_id("Person"), snapshot.type_id("LIKES"), snapshot.prop_key_id("id"))
    else {
        return Err("this database has :Person nodes but not the demo's (:Person)-[:LIKES]->(:Item) graph: give \
                    --data a new directory"
            .into());
    };
    println!("graph: {} nodes, {} relationships", snapshot.node_count(), snapshot.rel_count());
    let Some(me) = snapshot.node_by_key(person, &Value::Int(0)) else {
        println!("no :Person {{id: 0}} in this database to recommend for");
        return Ok(());
    };
    let start = Instant::now();
    let recs = recommend(&snapshot, me, likes, 10);
    let elapsed = start.elapsed();
    println!("top items recommended for person 0 (in {elapsed:.2?}):");
    for (item, score) in recs {
        let item_key = snapshot.node_prop(item, id).cloned().unwrap_or_default();
        println!("  item {:>6}  liked {score} times by people with shared likes", item_key.as_int().unwrap_or(-1));
    }
    let runs = 2000;
    let start = Instant::now();
    let people = snapshot.nodes_with_label(person);
    for i in 0..runs {
        std::hint::black_box(recommend(&snapshot, people[i % people.len()], likes, 10));
    }
    println!("recommendation traversal: {:.0} ops/s", runs as f64 / start.elapsed().as_secs_f64());
    Ok(())
}
