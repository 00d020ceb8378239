//! An aggregation over an expand runs as one fused operator (`ExpandAggregation` in plans). Each query here is
//! run twice on random graphs: as written (fused) and with a projection between the expand and the
//! aggregation, which keeps them apart. Both must give the same rows, or fail with the same kind of error.

use plexus_cypher::{Engine, Params, ResultValue, Value};
use plexus_storage::Store;
use proptest::prelude::*;

/// (fused, unfused) pairs. `me` is a parameter naming one node id.
const QUERIES: &[(&str, &str)] = &[
    // Counts grouped by what the start node decides: answered from degrees.
    (
        "MATCH (a)-[r:R]->(b) RETURN a.w AS k, count(b) AS c, count(*) AS n",
        "MATCH (a)-[r:R]->(b) WITH a, r, b, 0 AS z RETURN a.w AS k, count(b) AS c, count(*) AS n",
    ),
    (
        "MATCH (a:A)<-[r]-(b) RETURN a, count(r) AS c",
        "MATCH (a:A)<-[r]-(b) WITH a, r, b, 0 AS z RETURN a, count(r) AS c",
    ),
    (
        "MATCH (a)-[r:R|S]->(b) RETURN count(*) AS c, count(b) AS n",
        "MATCH (a)-[r:R|S]->(b) WITH a, r, b, 0 AS z RETURN count(*) AS c, count(b) AS n",
    ),
    (
        "MATCH (a)-[r:R]->(b) RETURN b, count(*) AS c",
        "MATCH (a)-[r:R]->(b) WITH a, r, b, 0 AS z RETURN b, count(*) AS c",
    ),
    (
        "MATCH (a:A)-[r]->(b) RETURN a, b, count(*) AS c",
        "MATCH (a:A)-[r]->(b) WITH a, r, b, 0 AS z RETURN a, b, count(*) AS c",
    ),
    (
        "MATCH (a)<-[r:R|S]-(b) WHERE b <> a RETURN id(b) AS k, sum(a.w) AS s, count(a.w) AS n",
        "MATCH (a)<-[r:R|S]-(b) WITH a, r, b, 0 AS z WHERE b <> a RETURN id(b) AS k, sum(a.w) AS s, count(a.w) AS n",
    ),
    (
        "MATCH (a)-[r]-(b) WHERE NOT (a)-[:S]->(b) RETURN a.w AS k, b, count(*) AS c",
        "MATCH (a)-[r]-(b) WITH a, r, b, 0 AS z WHERE NOT (a)-[:S]->(b) RETURN a.w AS k, b, count(*) AS c",
    ),
    (
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me AND o <> me WITH me, o, count(*) AS shared \
         MATCH (o)-[:S]->(c) WHERE NOT (me)-[:R]->(c) RETURN id(c) AS c, sum(shared) AS score",
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me WITH me, r1, r2, m, o, 0 AS z WHERE o <> me \
         WITH me, o, count(*) AS shared MATCH (o)-[s:S]->(c) WITH me, o, s, c, shared, 0 AS z \
         WHERE NOT (me)-[:R]->(c) RETURN id(c) AS c, sum(shared) AS score",
    ),
    (
        "MATCH (a)-[r]->(b) WHERE r.k > 2 RETURN b, count(*) AS c, sum(r.k) AS s",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WHERE r.k > 2 RETURN b, count(*) AS c, sum(r.k) AS s",
    ),
    ("MATCH (a:A)-[r]->(b) RETURN count(*) AS c", "MATCH (a:A)-[r]->(b) WITH a, r, b, 0 AS z RETURN count(*) AS c"),
    (
        "MATCH (a)-[r:R]->(b) WHERE a.w > 0 RETURN sum(a.w) AS s",
        "MATCH (a)-[r:R]->(b) WITH a, r, b, 0 AS z WHERE a.w > 0 RETURN sum(a.w) AS s",
    ),
    (
        "MATCH (a)-[r]->(b) RETURN b.w AS k, collect(a.w) AS l, max(r.k) AS m",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z RETURN b.w AS k, collect(a.w) AS l, max(r.k) AS m",
    ),
    (
        "MATCH (a)-[r]->(b) RETURN a, count(DISTINCT b) AS d, sum(b.w) AS s",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z RETURN a, count(DISTINCT b) AS d, sum(b.w) AS s",
    ),
    (
        "MATCH (a)-[r:S]->(b) WHERE b:A AND a.w IS NOT NULL RETURN a.w AS k, id(b) AS b, sum(a.w * 2) AS s",
        "MATCH (a)-[r:S]->(b) WITH a, r, b, 0 AS z WHERE b:A AND a.w IS NOT NULL \
         RETURN a.w AS k, id(b) AS b, sum(a.w * 2) AS s",
    ),
    (
        "MATCH (a)-[r:R]->(b) WHERE (a)-[:S]-(b) AND a <> b RETURN a, count(*) AS c",
        "MATCH (a)-[r:R]->(b) WITH a, r, b, 0 AS z WHERE (a)-[:S]-(b) AND a <> b RETURN a, count(*) AS c",
    ),
    (
        "MATCH (a)<-[r]-(b) WHERE NOT (b)<-[:R]-(a) RETURN id(b) AS k, count(*) AS c",
        "MATCH (a)<-[r]-(b) WITH a, r, b, 0 AS z WHERE NOT (b)<-[:R]-(a) RETURN id(b) AS k, count(*) AS c",
    ),
    (
        "OPTIONAL MATCH (a:B) WITH a MATCH (a)-[r]->(b) RETURN b, count(r) AS c",
        "OPTIONAL MATCH (a:B) WITH a MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z RETURN b, count(r) AS c",
    ),
    // Counts and sums of an integer slot of the input row.
    (
        "MATCH (a)-[r]->(b) WITH b, count(*) AS n MATCH (b)-[:S]->(c) RETURN id(c) AS k, count(n) AS c, sum(n) AS s",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH b, count(*) AS n MATCH (b)-[q:S]->(c) \
         WITH b, n, q, c, 0 AS z RETURN id(c) AS k, count(n) AS c, sum(n) AS s",
    ),
    // Two nodes and two relationships the neighbour must differ from (checked in the dense loop), and three
    // of each (checked one relationship at a time).
    (
        "MATCH (a)-[r1]->(b)<-[r2]-(c)-[r3]-(d) WHERE id(a) = $me AND d <> a AND d <> b \
         RETURN id(d) AS d, count(*) AS n",
        "MATCH (a)-[r1]->(b)<-[r2]-(c)-[r3]-(d) WHERE id(a) = $me WITH a, b, c, d, r1, r2, r3, 0 AS z \
         WHERE d <> a AND d <> b RETURN id(d) AS d, count(*) AS n",
    ),
    (
        "MATCH (a)-[r1]->(b)<-[r2]-(c)-[r3]-(d) WHERE id(a) = $me RETURN id(d) AS d, count(*) AS n",
        "MATCH (a)-[r1]->(b)<-[r2]-(c)-[r3]-(d) WHERE id(a) = $me WITH a, b, c, d, r1, r2, r3, 0 AS z \
         RETURN id(d) AS d, count(*) AS n",
    ),
    (
        "MATCH (a)-[r1]->(b)<-[r2]-(c)-[r3]-(d)-[r4]-(e) WHERE id(a) = $me AND e <> a AND e <> b AND e <> c \
         RETURN id(e) AS e, count(*) AS n",
        "MATCH (a)-[r1]->(b)<-[r2]-(c)-[r3]-(d)-[r4]-(e) WHERE id(a) = $me \
         WITH a, b, c, d, e, r1, r2, r3, r4, 0 AS z WHERE e <> a AND e <> b AND e <> c \
         RETURN id(e) AS e, count(*) AS n",
    ),
    // Groups lent one at a time to a sort that keeps a few (and to one that keeps them all).
    (
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me AND o <> me WITH me, o, count(*) AS shared \
         MATCH (o)-[:S]->(c) WHERE NOT (me)-[:R]->(c) \
         RETURN id(c) AS c, sum(shared) AS score ORDER BY score DESC, c LIMIT 3",
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me WITH me, r1, r2, m, o, 0 AS z WHERE o <> me \
         WITH me, o, count(*) AS shared MATCH (o)-[s:S]->(c) WITH me, o, s, c, shared, 0 AS z \
         WHERE NOT (me)-[:R]->(c) RETURN id(c) AS c, sum(shared) AS score ORDER BY score DESC, c LIMIT 3",
    ),
    (
        "MATCH (a)-[r]->(b) WITH b, count(*) AS n MATCH (b)<-[:R]-(c) RETURN c.w AS w, sum(n) AS s ORDER BY s",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH b, count(*) AS n MATCH (b)<-[q:R]-(c) \
         WITH b, n, q, c, 0 AS z RETURN c.w AS w, sum(n) AS s ORDER BY s",
    ),
    // A count over another count's groups takes them as cells: through a renaming WITH, with several outer
    // groups, reading a property of an outer key, summing an aggregate that is not a count.
    (
        "MATCH (a)-[r]->(b) WITH a, b, count(*) AS n WITH b AS x, a AS y, n AS m \
         MATCH (x)-[:S]->(c) WHERE c <> y RETURN id(c) AS k, sum(m) AS s, count(*) AS t",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH a, b, count(*) AS n WITH b AS x, a AS y, n AS m, 0 AS z \
         MATCH (x)-[q:S]->(c) WITH x, y, m, q, c, 0 AS z WHERE c <> y RETURN id(c) AS k, sum(m) AS s, count(*) AS t",
    ),
    (
        "MATCH (a)-[r]->(b) WITH a, b, sum(a.w) AS n MATCH (b)<-[:R]-(c) WHERE NOT (a)-[:S]->(c) \
         RETURN c, sum(n) AS s, count(a.w) AS t",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH a, b, sum(a.w) AS n, 0 AS z MATCH (b)<-[q:R]-(c) WITH a, b, n, q, c, 0 AS z \
         WHERE NOT (a)-[:S]->(c) RETURN c, sum(n) AS s, count(a.w) AS t",
    ),
    (
        "MATCH (a)-[r]->(b) WITH a, b, count(*) AS n MATCH (b)-[:S]->(c) RETURN id(c) AS k, sum(n * 4611686018427387904) AS s",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH a, b, count(*) AS n, 0 AS z MATCH (b)-[q:S]->(c) WITH n, c, q, 0 AS z \
         RETURN id(c) AS k, sum(n * 4611686018427387904) AS s",
    ),
    // Rows counted in batches (they share all but their start node, addend and bound relationships), and the
    // rows a batch cannot take: sums of zero, negative, null, float and huge addends, counts of nulls, a
    // state whose row filter fails, filters remembered per neighbour, several outer groups, self-loops both
    // ways.
    (
        "MATCH (a)-[r]->(b) WITH b, sum(a.w) AS n MATCH (b)-[:S]->(c) RETURN id(c) AS k, sum(n) AS s, count(n) AS t",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH b, sum(a.w) AS n, 0 AS z MATCH (b)-[q:S]->(c) \
         WITH n, c, q, 0 AS z RETURN id(c) AS k, sum(n) AS s, count(n) AS t",
    ),
    (
        "MATCH (a)-[r]->(b) WITH b, sum(a.w) AS n MATCH (b)-[:S]->(c) RETURN id(c) AS k, sum(n) AS s",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH b, sum(a.w) AS n, 0 AS z MATCH (b)-[q:S]->(c) \
         WITH n, c, q, 0 AS z RETURN id(c) AS k, sum(n) AS s",
    ),
    (
        "MATCH (a)-[r]->(b) WITH b, max(a.w) AS n MATCH (b)<-[:R]-(c) RETURN c, count(n) AS t",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH b, max(a.w) AS n, 0 AS z MATCH (b)<-[q:R]-(c) \
         WITH n, c, q, 0 AS z RETURN c, count(n) AS t",
    ),
    (
        "MATCH (me)-[r1:R]->(m)<-[r2]-(o) WHERE id(me) = $me AND me.w > 2 RETURN o, count(*) AS n",
        "MATCH (me)-[r1:R]->(m)<-[r2]-(o) WHERE id(me) = $me WITH me, m, o, r1, r2, 0 AS z WHERE me.w > 2 \
         RETURN o, count(*) AS n",
    ),
    (
        "MATCH (me)-[r1:R]->(m)<-[r2]-(o) WHERE id(me) = $me AND o:A AND o.w < 5 RETURN id(o) AS o, count(*) AS n",
        "MATCH (me)-[r1:R]->(m)<-[r2]-(o) WHERE id(me) = $me WITH me, m, o, r1, r2, 0 AS z WHERE o:A AND o.w < 5 \
         RETURN id(o) AS o, count(*) AS n",
    ),
    (
        "MATCH (a)-[r1]-(b)-[r2]-(c) WHERE id(a) = $me RETURN c, count(*) AS n",
        "MATCH (a)-[r1]-(b)-[r2]-(c) WHERE id(a) = $me WITH a, b, c, r1, r2, 0 AS z RETURN c, count(*) AS n",
    ),
    (
        "MATCH (a)-[r]->(b) WITH a, b, count(*) AS n MATCH (b)-[:S]-(c) WHERE c <> a \
         RETURN a, id(c) AS k, sum(n) AS s",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH a, b, count(*) AS n, 0 AS z MATCH (b)-[q:S]-(c) \
         WITH a, n, c, q, 0 AS z WHERE c <> a RETURN a, id(c) AS k, sum(n) AS s",
    ),
    (
        "MATCH (a)-[r]->(b) WITH a.w AS w, b, count(*) AS n MATCH (b)<-[:R]-(c) WHERE NOT (c)-[:S]->(b) \
         RETURN w, c, sum(n) AS s",
        "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH a.w AS w, b, count(*) AS n, 0 AS z MATCH (b)<-[q:R]-(c) \
         WITH w, b, n, c, q, 0 AS z WHERE NOT (c)-[:S]->(b) RETURN w, c, sum(n) AS s",
    ),
    (
        "MATCH (a:B)-[r:S]->(b) RETURN count(*) AS c ORDER BY c LIMIT 1",
        "MATCH (a:B)-[r:S]->(b) WITH a, r, b, 0 AS z RETURN count(*) AS c ORDER BY c LIMIT 1",
    ),    // The first hop's matches lent in runs to the count (see `lend_hops`): a count whose state reads the first
    // hop's node, a label on that node, every node a start with a filter on it, a count of the first hop's
    // relationship, undirected hops over self-loops.
    (
        "MATCH (a)-[r1:R]->(m)<-[r2:R]-(o) RETURN m.w AS k, id(o) AS o, count(*) AS c",
        "MATCH (a)-[r1:R]->(m)<-[r2:R]-(o) WITH a, r1, m, r2, o, 0 AS z RETURN m.w AS k, id(o) AS o, count(*) AS c",
    ),
    (
        "MATCH (a)-[r1]->(m:A)<-[r2]-(o) WHERE o <> a RETURN id(a) AS a, id(o) AS o, count(*) AS c",
        "MATCH (a)-[r1]->(m:A)<-[r2]-(o) WITH a, r1, m, r2, o, 0 AS z WHERE o <> a \
         RETURN id(a) AS a, id(o) AS o, count(*) AS c",
    ),
    (
        "MATCH (a)-[r1:S]-(m)-[r2]-(o) WHERE a.w > 1 RETURN id(o) AS o, count(r1) AS c",
        "MATCH (a)-[r1:S]-(m)-[r2]-(o) WITH a, r1, m, r2, o, 0 AS z WHERE a.w > 1 RETURN id(o) AS o, count(r1) AS c",
    ),
    (
        "MATCH (a)-[r0]->(b)-[r1]->(m)<-[r2]-(o) WHERE id(a) = $me RETURN b, id(o) AS o, count(*) AS c",
        "MATCH (a)-[r0]->(b)-[r1]->(m)<-[r2]-(o) WHERE id(a) = $me WITH a, r0, b, r1, m, r2, o, 0 AS z \
         RETURN b, id(o) AS o, count(*) AS c",
    ),
];

/// (sort over the groups, the same sort on an expression the groups cannot answer): the first lends only the
/// groups that sort into its bound, the second every group. Both must return the same rows in the same order,
/// ties included (the sort is stable, so ties keep the order the groups are lent in).
const TOP_QUERIES: &[(&str, &str)] = &[
    (
        "MATCH (a)-[r]->(b) RETURN id(b) AS k, count(*) AS c ORDER BY c DESC LIMIT 2",
        "MATCH (a)-[r]->(b) RETURN id(b) AS k, count(*) AS c ORDER BY c + 0 DESC LIMIT 2",
    ),
    (
        "MATCH (a)<-[r:R]-(b) RETURN id(b) AS k, count(*) AS c ORDER BY c, k SKIP 1 LIMIT 2",
        "MATCH (a)<-[r:R]-(b) RETURN id(b) AS k, count(*) AS c ORDER BY c + 0, k SKIP 1 LIMIT 2",
    ),
    (
        "MATCH (a)-[r]-(b) RETURN id(b) AS k, count(*) AS c ORDER BY k DESC LIMIT 3",
        "MATCH (a)-[r]-(b) RETURN id(b) AS k, count(*) AS c ORDER BY k + 0 DESC LIMIT 3",
    ),
    (
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me AND o <> me WITH me, o, count(*) AS shared \
         MATCH (o)-[:S]->(c) WHERE NOT (me)-[:R]->(c) RETURN id(c) AS c, sum(shared) AS score \
         ORDER BY score DESC LIMIT $me",
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me AND o <> me WITH me, o, count(*) AS shared \
         MATCH (o)-[:S]->(c) WHERE NOT (me)-[:R]->(c) RETURN id(c) AS c, sum(shared) AS score \
         ORDER BY score * 1 DESC LIMIT $me",
    ),
    // The neighbours counted must be in a set (not out of one), ranked ascending with the ids descending.
    (
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me AND o <> me WITH me, o, count(*) AS shared \
         MATCH (o)-[:S]->(c) WHERE (me)-[:S]->(c) RETURN id(c) AS c, sum(shared) AS score \
         ORDER BY score, c DESC SKIP 1 LIMIT 2",
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me AND o <> me WITH me, o, count(*) AS shared \
         MATCH (o)-[:S]->(c) WHERE (me)-[:S]->(c) RETURN id(c) AS c, sum(shared) AS score \
         ORDER BY score * 1, c DESC SKIP 1 LIMIT 2",
    ),
    (
        "MATCH (a)-[r]->(b) RETURN id(b) AS k, count(*) AS c, sum(a.w) AS s ORDER BY s DESC, c LIMIT 2",
        "MATCH (a)-[r]->(b) RETURN id(b) AS k, count(*) AS c, sum(a.w) AS s ORDER BY s * 1 DESC, c LIMIT 2",
    ),
    (
        "MATCH (a)-[r:S]->(b) WITH id(b) AS k, count(*) AS c RETURN k AS key, c AS n ORDER BY n DESC, key LIMIT 2",
        "MATCH (a)-[r:S]->(b) WITH id(b) AS k, count(*) AS c RETURN k AS key, c AS n ORDER BY n * 1 DESC, key LIMIT 2",
    ),
    // Sums that are not all integers: the groups hold values, sorted as ORDER BY sorts them.
    (
        "MATCH (a) WITH a, CASE WHEN a.w > 3 THEN 1.5 ELSE 1 END AS x MATCH (a)-[r]->(b) \
         RETURN id(b) AS k, sum(x) AS s ORDER BY s, k DESC SKIP 1 LIMIT 4",
        "MATCH (a) WITH a, CASE WHEN a.w > 3 THEN 1.5 ELSE 1 END AS x MATCH (a)-[r]->(b) \
         RETURN id(b) AS k, sum(x) AS s ORDER BY s * 1, k DESC SKIP 1 LIMIT 4",
    ),
    (
        "MATCH (a) WITH a, CASE WHEN a.w > 3 THEN 0.5 END AS x MATCH (a)-[r]->(b) \
         RETURN id(b) AS k, sum(x) AS s ORDER BY s DESC LIMIT 3",
        "MATCH (a) WITH a, CASE WHEN a.w > 3 THEN 0.5 END AS x MATCH (a)-[r]->(b) \
         RETURN id(b) AS k, sum(x) AS s ORDER BY s * 1 DESC LIMIT 3",
    ),
    // Sort keys the groups can answer only in part: groups tied on those are all lent, the sort decides.
    (
        "MATCH (a)-[r]->(b) RETURN id(b) AS k, count(*) AS c ORDER BY c DESC, -k LIMIT 2",
        "MATCH (a)-[r]->(b) RETURN id(b) AS k, count(*) AS c ORDER BY c + 0 DESC, -k LIMIT 2",
    ),
    (
        "MATCH (a)<-[r]-(b) RETURN id(b) AS k, count(*) AS c ORDER BY c, k % 3 DESC SKIP 1 LIMIT 2",
        "MATCH (a)<-[r]-(b) RETURN id(b) AS k, count(*) AS c ORDER BY c + 0, k % 3 DESC SKIP 1 LIMIT 2",
    ),
    // The recommendation as users write it: NOT EXISTS on the groups, ranked with a property.
    (
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me AND o <> me WITH me, o, count(*) AS shared \
         MATCH (o)-[:S]->(c) WITH me, c, sum(shared) AS n WHERE NOT EXISTS { (me)-[:R]->(c) } \
         RETURN c.i AS item, n ORDER BY n DESC, item LIMIT 3",
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me AND o <> me WITH me, o, count(*) AS shared \
         MATCH (o)-[:S]->(c) WITH me, c, sum(shared) AS n WHERE NOT EXISTS { (me)-[:R]->(c) } \
         RETURN c.i AS item, n ORDER BY n * 1 DESC, item LIMIT 3",
    ),
];

/// (a sort over an expand, which lends it each match; the same with an UNWIND of one element between them,
/// which hands batches over instead): the same rows in the same order.
const LENT_EXPANSIONS: &[(&str, &str)] = &[
    (
        "MATCH (a)-[r]->(b) RETURN id(a) AS x, id(b) AS y, id(r) AS z ORDER BY y DESC LIMIT 3",
        "MATCH (a)-[r]->(b) UNWIND [1] AS one RETURN id(a) AS x, id(b) AS y, id(r) AS z ORDER BY y DESC LIMIT 3",
    ),
    (
        "MATCH (a)-[r1]->(b)-[r2]-(c) RETURN id(r1) AS p, id(r2) AS q ORDER BY q, p LIMIT 4",
        "MATCH (a)-[r1]->(b)-[r2]-(c) UNWIND [1] AS one RETURN id(r1) AS p, id(r2) AS q ORDER BY q, p LIMIT 4",
    ),
    (
        "MATCH (a)<-[r:R]-(b) WHERE b:A RETURN id(b) AS k ORDER BY k DESC SKIP 1 LIMIT 2",
        "MATCH (a)<-[r:R]-(b) UNWIND [1] AS one WITH a, r, b WHERE b:A RETURN id(b) AS k ORDER BY k DESC SKIP 1 LIMIT 2",
    ),
    (
        "MATCH (a)-[r]->(b) WITH b, count(*) AS c MATCH (b)-[s]->(d) RETURN id(d) AS d, c ORDER BY c DESC LIMIT 3",
        "MATCH (a)-[r]->(b) WITH b, count(*) AS c MATCH (b)-[s]->(d) UNWIND [1] AS one \
         RETURN id(d) AS d, c ORDER BY c DESC LIMIT 3",
    ),
    (
        "MATCH (a)-[r]->(b) RETURN id(b) AS k, b.w AS w ORDER BY k",
        "MATCH (a)-[r]->(b) UNWIND [1] AS one RETURN id(b) AS k, b.w AS w ORDER BY k",
    ),
];

/// (a filter on grouping keys moved below the count, the same filter kept above it): the same rows.
const GROUP_FILTERS: &[(&str, &str)] = &[
    (
        "MATCH (a)-[r]->(b) WITH a, b, count(*) AS c WHERE NOT EXISTS { (a)-[:S]->(b) } RETURN a, b, c",
        "MATCH (a)-[r]->(b) WITH a, b, count(*) AS c WHERE NOT EXISTS { (a)-[:S]->(b) } AND c > -1 RETURN a, b, c",
    ),
    (
        "MATCH (a)-[r:R]-(b) WITH b AS x, a AS y, count(*) AS c WHERE (x)<-[:S]-(y) RETURN x, y, c",
        "MATCH (a)-[r:R]-(b) WITH b AS x, a AS y, count(*) AS c WHERE (x)<-[:S]-(y) AND c > -1 RETURN x, y, c",
    ),
    (
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me AND o <> me WITH me, o, count(*) AS shared \
         MATCH (o)-[:S]->(c) WITH me, c, sum(shared) AS n WHERE NOT (me)-[:R]->(c) RETURN id(c) AS c, n",
        "MATCH (me)-[r1:R]->(m)<-[r2:R]-(o) WHERE id(me) = $me AND o <> me WITH me, o, count(*) AS shared \
         MATCH (o)-[:S]->(c) WITH me, c, sum(shared) AS n WHERE NOT (me)-[:R]->(c) AND n > -1 \
         RETURN id(c) AS c, n",
    ),
];

#[derive(Debug, Clone)]
struct Graph {
    /// Per node: label (0 none, 1 A, 2 B) and property `w` as a Cypher literal (an integer, sometimes one
    /// that overflows a sum, a float or a string), if any.
    nodes: Vec<(u8, Option<String>)>,
    /// (source, target, type S rather than R, property k)
    rels: Vec<(usize, usize, bool, Option<i64>)>,
}

fn graph() -> impl Strategy<Value = Graph> {
    let w = prop_oneof![
        3 => Just(None),
        12 => (-3i64..10).prop_map(|i| Some(i.to_string())),
        1 => Just(Some(i64::MAX.to_string())),
        1 => (0i64..4).prop_map(|i| Some(format!("{i}.5"))),
        1 => Just(Some("'x'".to_string())),
    ];
    proptest::collection::vec((0u8..3, w), 1..10).prop_flat_map(|nodes| {
        let n = nodes.len();
        let rels = proptest::collection::vec((0..n, 0..n, any::<bool>(), proptest::option::of(0i64..5)), 0..30);
        (Just(nodes), rels).prop_map(|(nodes, rels)| Graph { nodes, rels })
    })
}

fn load(g: &Graph) -> (Store, Engine) {
    let store = Store::in_memory();
    let engine = Engine::new();
    let mut text = String::from("CREATE ");
    for (i, (label, w)) in g.nodes.iter().enumerate() {
        let label = ["", ":A", ":B"][*label as usize];
        let w = w.as_ref().map_or(String::new(), |w| format!(", w: {w}"));
        text += &format!("{}(n{i}{label} {{i: {i}{w}}})", if i > 0 { ", " } else { "" });
    }
    for (s, t, is_s, k) in &g.rels {
        let k = k.map_or(String::new(), |k| format!(" {{k: {k}}}"));
        text += &format!(", (n{s})-[:{}{k}]->(n{t})", if *is_s { "S" } else { "R" });
    }
    engine.execute(&store, &text, &Params::new()).expect("load");
    (store, engine)
}

fn run(engine: &Engine, store: &Store, q: &str, me: i64) -> Result<Vec<String>, String> {
    run_in_order(engine, store, q, me).map(|mut rows| {
        rows.sort();
        rows
    })
}

fn run_in_order(engine: &Engine, store: &Store, q: &str, me: i64) -> Result<Vec<String>, String> {
    let params: Params = [("me".to_string(), Value::Int(me))].into_iter().collect();
    match engine.execute(store, q, &params) {
        Ok(r) => Ok(r.rows.iter().map(|row| format!("{:?}", row as &Vec<ResultValue>)).collect()),
        Err(e) => Err(format!("{:?}", e.kind)),
    }
}

/// Whether rows must match in order (the query sorts them completely) or only as a multiset.
#[derive(Clone, Copy)]
enum Compare {
    InOrder,
    AsSet,
}

/// Runs both queries of each pair on `g` and compares their rows (or errors).
fn pairs_agree(g: &Graph, me: i64, pairs: &[(&str, &str)], compare: Compare) -> Result<(), TestCaseError> {
    let (store, engine) = load(g);
    let run = |q: &str| match compare {
        Compare::InOrder => run_in_order(&engine, &store, q, me),
        Compare::AsSet => run(&engine, &store, q, me),
    };
    for (first, second) in pairs {
        prop_assert_eq!(run(first), run(second), "{} vs {}", first, second);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
    #[test]
    fn fused_and_unfused_plans_agree(g in graph(), me in 0i64..10) {
        pairs_agree(&g, me, QUERIES, Compare::AsSet)?;
    }

    #[test]
    fn a_sort_over_the_top_groups_returns_what_it_returns_over_all(g in graph(), me in 0i64..10) {
        pairs_agree(&g, me, TOP_QUERIES, Compare::InOrder)?;
    }

    #[test]
    fn a_filter_on_grouping_keys_moved_below_the_count_keeps_the_same_groups(g in graph(), me in 0i64..10) {
        pairs_agree(&g, me, GROUP_FILTERS, Compare::AsSet)?;
    }

    #[test]
    fn a_sort_lent_each_match_of_an_expand_returns_what_it_returns_over_batches(g in graph(), me in 0i64..10) {
        pairs_agree(&g, me, LENT_EXPANSIONS, Compare::InOrder)?;
    }
}

/// A node with more matches than one run of `lend_hops` (1,024): every run is counted, the first of each run
/// through the checks of a new row and the others straight into the open batch.
#[test]
fn a_hop_with_more_matches_than_a_run_counts_them_all() {
    let store = Store::in_memory();
    let engine = Engine::new();
    let build = "CREATE (me:P {i: -1}) WITH me UNWIND range(0, 2599) AS i CREATE (me)-[:R]->(m:M {i: i}) \
                 WITH m, i UNWIND range(0, i % 3) AS j MERGE (o:P {i: j}) CREATE (o)-[:R]->(m)";
    engine.execute(&store, build, &Params::new()).expect("build");
    let fused = "MATCH (me:P {i: -1})-[r1:R]->(m:M)<-[r2:R]-(o) WHERE o <> me RETURN id(o) AS o, count(*) AS c";
    let unfused = "MATCH (me:P {i: -1})-[r1:R]->(m:M)<-[r2:R]-(o) WITH me, r1, m, r2, o, 0 AS z WHERE o <> me \
                   RETURN id(o) AS o, count(*) AS c";
    let rows = run(&engine, &store, fused, 0).expect("fused");
    assert_eq!(rows, run(&engine, &store, unfused, 0).expect("unfused"));
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows.iter().any(|r| r.contains("Int(2600)")), "{rows:?}");
}

#[test]
fn filters_on_grouping_keys_move_below_the_count() {
    let engine = Engine::new();
    for (below, above) in GROUP_FILTERS {
        let plan = engine.explain(below).expect("explain");
        assert!(!plan.contains("+Filter\n+Projection(1 item(s))\n+ExpandAggregation"), "{below}\n{plan}");
        let filters_in_count =
            |plan: &str| plan.matches("1 filter(s)").count() + 2 * plan.matches("2 filter(s)").count();
        let kept = engine.explain(above).expect("explain");
        assert!(filters_in_count(&plan) > filters_in_count(&kept), "{below}\n{plan}\n{above}\n{kept}");
    }
}

/// Top groups on a graph with hundreds of groups: bounds kept by insertion into a short sorted list, and bounds
/// past it that select over every group, each against the same sort over all groups.
#[test]
fn top_groups_on_many_groups_match_a_sort_over_all() {
    // A fixed pseudo-random graph (xorshift), so a failure reproduces.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let nodes: Vec<(u8, Option<String>)> = (0..400).map(|i| ((i % 3) as u8, Some((i % 7).to_string()))).collect();
    let rels = (0..3000).map(|_| (next(40), next(400), next(4) == 0, Some(next(5) as i64))).collect();
    let g = Graph { nodes, rels };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for bound in ["LIMIT 1", "LIMIT 10", "SKIP 5 LIMIT 59", "LIMIT 64", "LIMIT 65", "SKIP 30 LIMIT 100", "LIMIT 390"] {
        for (order, all) in [
            ("c DESC, k", "c + 0 DESC, k"),
            // Ties on the only key: the groups' order decides.
            ("c DESC", "c + 0 DESC"),
            ("c, k DESC", "c + 0, k DESC"),
            ("k DESC", "k + 0 DESC"),
            ("c DESC, k % 5", "c + 0 DESC, k % 5"),
        ] {
            let q = |o: &str| format!("MATCH (a)-[r]->(b) RETURN id(b) AS k, count(*) AS c ORDER BY {o} {bound}");
            pairs.push((q(order), q(all)));
        }
    }
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    pairs_agree(&g, 0, &pairs, Compare::InOrder).expect("the same rows");
    let engine = Engine::new();
    for (top, _) in &pairs {
        let plan = engine.explain(top).expect("explain");
        // Every sort key is one the groups answer: they come in the sort's order, with no sort above.
        let exact = plan.contains("top groups in sort order") && !plan.contains("Sort(");
        assert!(exact || (top.contains("k % 5") && plan.contains("top groups for the sort")), "{top}\n{plan}");
    }
}

/// Items mixing an aggregate with a grouping key (`count(*) * a.w` grouped by `a`) read the key as the group has
/// it: such an aggregation is not fused (a fused count keeps no input row per group), and answers as unfused.
#[test]
fn items_mixing_aggregates_and_keys_see_the_keys() {
    let nodes: Vec<(u8, Option<String>)> = (0..40).map(|i| ((i % 3) as u8, Some((1 + i % 4).to_string()))).collect();
    let rels = (0..120).map(|i| ((i * 7) % 40, (i * 13 + 5) % 40, i % 3 == 0, Some((i % 5) as i64))).collect();
    let g = Graph { nodes, rels };
    let pairs = [
        (
            "MATCH (a)-[r:R]->(b) RETURN a.w AS k, count(*) + a.w AS x, [count(*), a.w] AS l",
            "MATCH (a)-[r:R]->(b) WITH a, r, b, 0 AS z RETURN a.w AS k, count(*) + a.w AS x, [count(*), a.w] AS l",
        ),
        (
            "MATCH (a)-[r]->(b) WITH a, count(*) * a.w AS x, sum(r.k) > a.w AS y RETURN id(a) AS a, x, y",
            "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH a, count(*) * a.w AS x, sum(r.k) > a.w AS y \
             RETURN id(a) AS a, x, y",
        ),
    ];
    pairs_agree(&g, 0, &pairs, Compare::AsSet).expect("the same rows");
    let (store, engine) = load(&g);
    let rows = run(&engine, &store, pairs[0].0, 0).expect("runs");
    assert!(rows.iter().all(|r| !r.contains("Null")), "{rows:?}");
}

/// Counts in batches larger than a batch's queue (4,096 rows), walked in parts and merged each time, and
/// batches whose rows alternate with rows of another state.
#[test]
fn large_batches_match_the_unfused_plan() {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let nodes: Vec<(u8, Option<String>)> = (0..6000).map(|i| ((i % 3) as u8, Some((1 + i % 4).to_string()))).collect();
    let rels = (0..16000).map(|_| (next(6000), next(6000), next(3) == 0, Some(next(5) as i64))).collect();
    let g = Graph { nodes, rels };
    let pairs = [
        (
            "MATCH (a)-[r]->(b) WITH b, count(*) AS n MATCH (b)-[:R]-(c) RETURN id(c) AS k, sum(n) AS s",
            "MATCH (a)-[r]->(b) WITH a, r, b, 0 AS z WITH b, count(*) AS n, 0 AS z MATCH (b)-[q:R]-(c) \
             WITH n, c, q, 0 AS z RETURN id(c) AS k, sum(n) AS s",
        ),
        (
            "MATCH (a)-[r1]->(b)<-[r2]-(c) RETURN id(c) AS k, count(*) AS n",
            "MATCH (a)-[r1]->(b)<-[r2]-(c) WITH a, b, c, r1, r2, 0 AS z RETURN id(c) AS k, count(*) AS n",
        ),
        (
            "MATCH (a)-[r1]->(b)<-[r2]-(c) WHERE a.w > 2 OR b.w > 3 RETURN a.w AS w, id(c) AS k, count(*) AS n",
            "MATCH (a)-[r1]->(b)<-[r2]-(c) WITH a, b, c, r1, r2, 0 AS z WHERE a.w > 2 OR b.w > 3 \
             RETURN a.w AS w, id(c) AS k, count(*) AS n",
        ),
    ];
    pairs_agree(&g, 0, &pairs, Compare::AsSet).expect("the same rows");
}

#[test]
fn sorts_over_groups_lend_only_the_top_groups() {
    let engine = Engine::new();
    for (top, all) in TOP_QUERIES {
        let plan = engine.explain(top).expect("explain");
        let exact = plan.contains("top groups in sort order") && !plan.contains("Sort(");
        let partial = plan.contains("top groups for the sort") && plan.contains("Sort(");
        assert!(exact || partial, "{top}\n{plan}");
        let plan = engine.explain(all).expect("explain");
        assert!(plan.contains("counted per neighbour") && !plan.contains("top groups"), "{all}\n{plan}");
    }
}

#[test]
fn the_queries_are_fused_and_their_counterparts_are_not() {
    let engine = Engine::new();
    for (fused, unfused) in QUERIES {
        let plan = engine.explain(fused).expect("explain");
        assert!(plan.contains("ExpandAggregation"), "{fused}\n{plan}");
        let plan = engine.explain(unfused).expect("explain");
        assert!(!plan.contains("ExpandAggregation"), "{unfused}\n{plan}");
    }
    // The recommendation counts per neighbour in both of its aggregations.
    let recommendation = QUERIES.iter().find(|(q, _)| q.contains("shared")).expect("the recommendation").0;
    let plan = engine.explain(recommendation).expect("explain");
    assert_eq!(plan.matches("counted per neighbour").count(), 2, "{plan}");
}

/// A query stopped at any point, including in the middle of walking a batch, leaves nothing behind for the
/// next query on the same thread (the per-thread counters and cell arrays go back to their pools empty).
#[test]
fn a_stopped_count_leaves_nothing_for_the_next_query() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let store = Store::in_memory();
    let engine = Engine::new();
    let load = "UNWIND range(1, 3000) AS i CREATE (p:P {i: i})-[:R]->(q:Q {i: i % 7}) \
                WITH p, q MATCH (x:Q {i: 3}) WHERE x <> q CREATE (p)-[:R]->(x)";
    engine.execute(&store, load, &Params::new()).expect("load");
    let q = "MATCH (a:P)-[:R]->(b) WITH b, count(*) AS n MATCH (b)<-[:R]-(c) RETURN id(c) AS c, sum(n) AS s";
    let unfused = "MATCH (a:P)-[r:R]->(b) WITH a, r, b, 0 AS z WITH b, count(*) AS n, 0 AS z \
                   MATCH (b)<-[q:R]-(c) WITH n, c, q, 0 AS z RETURN id(c) AS c, sum(n) AS s";
    let expected = run(&engine, &store, unfused, 0).expect("runs");
    assert_eq!(run(&engine, &store, q, 0).expect("runs"), expected);
    let mut stopped = 0;
    for n in 1..36 {
        let checks = Arc::new(AtomicUsize::new(0));
        let seen = checks.clone();
        let interrupt = plexus_cypher::Interrupt::new(None, None)
            .with_probe(std::time::Duration::ZERO, move || seen.fetch_add(1, Ordering::Relaxed) + 1 >= n);
        let interrupt = Arc::new(interrupt);
        if engine.execute_with(&store, q, &Params::new(), Some(&interrupt)).is_err() {
            stopped += 1;
        }
        assert_eq!(run(&engine, &store, q, 0).expect("runs"), expected, "after a stop at check {n}");
    }
    assert!(stopped > 10, "only {stopped} runs were stopped");
}
