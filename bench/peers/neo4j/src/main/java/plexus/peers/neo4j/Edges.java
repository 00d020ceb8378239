/*
 * The edge-list workloads on the open store: the import, the random reads and the random writes, with the
 * checksums of bench/peers/peerbench/peer.py.
 *
 * Model: nodes `(:V {id: long})` behind a uniqueness constraint on `id`, relationships `[:E {weight: double}]`.
 * Import: the offline bulk importer (see BulkImport), Neo4j's own fastest path for an initial load, run in this JVM
 * from the neo4j-import-tool artifact rather than a transactional load; it reads a node file of the distinct ids and
 * the edge list in place, then the constraint is created, built and online before the import returns.
 * Reads and writes go through the Core API: a vertex is found through the constraint's index, an edge `s -> d` by
 * walking the smaller of `s`'s outgoing and `d`'s incoming `E` relationships (Neo4j has no index on node pairs);
 * degrees come from `getDegree`, which dense nodes answer from their relationship-group counts.
 */
package plexus.peers.neo4j;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.eclipse.collections.impl.set.mutable.primitive.LongHashSet;
import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.ResourceIterable;
import org.neo4j.graphdb.Transaction;

final class Edges {
    static final Label V = Label.label("V");
    static final RelationshipType E = RelationshipType.withName("E");
    /** Queries per read transaction. */
    static final int READ_CHUNK = 1000;

    private final PeerServer server;

    Edges(PeerServer server) {
        this.server = server;
    }

    void importEdges(Path csv) throws IOException {
        Path home = server.home();
        long t0 = System.nanoTime();
        server.stop();
        long t1 = System.nanoTime();
        Path input = home.resolve("import-input");
        Files.createDirectories(input);
        long[][] columns = BulkImport.distinctColumns(csv, 2);
        BulkImport.writeIds(input.resolve("nodes.csv"), BulkImport.union(columns[0], columns[1]));
        BulkImport.writeHeader(input.resolve("nodes-header.csv"), "id:ID(V)");
        BulkImport.writeHeader(input.resolve("edges-header.csv"), ":START_ID(V),:END_ID(V),weight:double");
        BulkImport.run(home,
                List.of("V=" + input.resolve("nodes-header.csv") + "," + input.resolve("nodes.csv")),
                List.of("E=" + input.resolve("edges-header.csv") + "," + csv.toAbsolutePath()));
        for (String f : new String[] {"nodes.csv", "nodes-header.csv", "edges-header.csv"}) {
            Files.delete(input.resolve(f));
        }
        Files.delete(input);
        long t2 = System.nanoTime();
        server.start(home);
        long t3 = System.nanoTime();
        server.uniqueIds(V);
        System.err.printf("import_edges: stop %.2f s, node file and bulk import %.2f s, start %.2f s, "
                + "constraint %.2f s%n",
                (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9, (System.nanoTime() - t3) / 1e9);
    }

    private GraphDatabaseService db() {
        return server.db();
    }

    private static long id(Node n) {
        return ((Number) n.getProperty("id")).longValue();
    }

    private static double weight(Relationship r) {
        return ((Number) r.getProperty("weight")).doubleValue();
    }

    /** The relationship `s -> d` of type E, or null, walking the shorter of the two relationship lists. */
    @SuppressWarnings("deprecation")
    static Relationship between(Node s, Node d) {
        if (s.getDegree(E, Direction.OUTGOING) <= d.getDegree(E, Direction.INCOMING)) {
            long target = d.getId();
            try (ResourceIterable<Relationship> rels = s.getRelationships(Direction.OUTGOING, E)) {
                for (Relationship r : rels) {
                    if (r.getEndNodeId() == target) {
                        return r;
                    }
                }
            }
        } else {
            long source = s.getId();
            try (ResourceIterable<Relationship> rels = d.getRelationships(Direction.INCOMING, E)) {
                for (Relationship r : rels) {
                    if (r.getStartNodeId() == source) {
                        return r;
                    }
                }
            }
        }
        return null;
    }

    long findEdges(long[] src, long[] dst) {
        long hits = 0;
        for (int lo = 0; lo < src.length; lo += READ_CHUNK) {
            try (Transaction tx = db().beginTx()) {
                for (int i = lo; i < Math.min(src.length, lo + READ_CHUNK); i++) {
                    Node s = tx.findNode(V, "id", src[i]);
                    Node d = s == null ? null : tx.findNode(V, "id", dst[i]);
                    if (d != null && between(s, d) != null) {
                        hits++;
                    }
                }
            }
        }
        return hits;
    }

    /** (edges, sum of the other ends' ids, sum of weights) over the outgoing or incoming edges of each query. */
    Object[] edges(long[] v, boolean out) {
        Direction dir = out ? Direction.OUTGOING : Direction.INCOMING;
        long count = 0;
        long ids = 0;
        double weights = 0;
        for (int lo = 0; lo < v.length; lo += READ_CHUNK) {
            try (Transaction tx = db().beginTx()) {
                for (int i = lo; i < Math.min(v.length, lo + READ_CHUNK); i++) {
                    Node n = tx.findNode(V, "id", v[i]);
                    if (n == null) {
                        continue;
                    }
                    try (ResourceIterable<Relationship> rels = n.getRelationships(dir, E)) {
                        for (Relationship r : rels) {
                            count++;
                            ids += id(out ? r.getEndNode() : r.getStartNode());
                            weights += weight(r);
                        }
                    }
                }
            }
        }
        return new Object[] {count, ids, weights};
    }

    /** (distinct neighbours, sum of their ids) over each query, either direction. */
    @SuppressWarnings("deprecation")
    Object[] uniqueNeighbours(long[] v) {
        long count = 0;
        long ids = 0;
        LongHashSet seen = new LongHashSet();
        for (int lo = 0; lo < v.length; lo += READ_CHUNK) {
            try (Transaction tx = db().beginTx()) {
                for (int i = lo; i < Math.min(v.length, lo + READ_CHUNK); i++) {
                    Node n = tx.findNode(V, "id", v[i]);
                    if (n == null) {
                        continue;
                    }
                    seen.clear();
                    long self = n.getId();
                    try (ResourceIterable<Relationship> rels = n.getRelationships(Direction.BOTH, E)) {
                        for (Relationship r : rels) {
                            if (seen.add(r.getOtherNodeId(self))) {
                                count++;
                                ids += id(r.getOtherNode(n));
                            }
                        }
                    }
                }
            }
        }
        return new Object[] {count, ids};
    }

    /** (sum of degrees, sum of weights) over the outgoing or incoming edges of each query, inside the store. */
    Object[] degreeWeight(long[] v, boolean out) {
        Direction dir = out ? Direction.OUTGOING : Direction.INCOMING;
        long degrees = 0;
        double weights = 0;
        for (int lo = 0; lo < v.length; lo += READ_CHUNK) {
            try (Transaction tx = db().beginTx()) {
                for (int i = lo; i < Math.min(v.length, lo + READ_CHUNK); i++) {
                    Node n = tx.findNode(V, "id", v[i]);
                    if (n == null) {
                        continue;
                    }
                    degrees += n.getDegree(E, dir);
                    try (ResourceIterable<Relationship> rels = n.getRelationships(dir, E)) {
                        for (Relationship r : rels) {
                            weights += weight(r);
                        }
                    }
                }
            }
        }
        return new Object[] {degrees, weights};
    }

    private static Node vertex(Transaction tx, long id) {
        Node n = tx.findNode(V, "id", id);
        if (n == null) {
            n = tx.createNode(V);
            n.setProperty("id", id);
        }
        return n;
    }

    /** Sets the weight of each `src[i] -> dst[i]`, creating the edge (and its ends) where missing. */
    void upsert(long[] src, long[] dst, double[] weight, int batch) {
        for (int lo = 0; lo < src.length; lo += batch) {
            try (Transaction tx = db().beginTx()) {
                for (int i = lo; i < Math.min(src.length, lo + batch); i++) {
                    Node s = vertex(tx, src[i]);
                    Node d = vertex(tx, dst[i]);
                    Relationship r = between(s, d);
                    if (r == null) {
                        r = s.createRelationshipTo(d, E);
                    }
                    r.setProperty("weight", weight[i]);
                }
                tx.commit();
            }
        }
    }

    /** Deletes each `src[i] -> dst[i]` that exists; the vertices stay. */
    void remove(long[] src, long[] dst, int batch) {
        for (int lo = 0; lo < src.length; lo += batch) {
            try (Transaction tx = db().beginTx()) {
                for (int i = lo; i < Math.min(src.length, lo + batch); i++) {
                    Node s = tx.findNode(V, "id", src[i]);
                    Node d = s == null ? null : tx.findNode(V, "id", dst[i]);
                    Relationship r = d == null ? null : between(s, d);
                    if (r != null) {
                        r.delete();
                    }
                }
                tx.commit();
            }
        }
    }
}
