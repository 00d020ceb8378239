/*
 * Small concurrent durable transactions: a store with one seed vertex `(:V {id: 0})` and a uniqueness constraint
 * on `V.id`; each transaction creates a vertex and an `E` relationship from it to the seed, and counts once
 * `commit()` has returned (Neo4j's default: the transaction log is forced to disk before that, batched across
 * concurrent committers). A transaction that Neo4j aborts as transient (a deadlock) is retried.
 */
package plexus.peers.neo4j;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.graphdb.TransientFailureException;

final class Commits {
    private final PeerServer server;

    Commits(PeerServer server) {
        this.server = server;
    }

    void prepare(Path dir) {
        server.start(dir);
        server.uniqueIds(Edges.V);
        try (Transaction tx = server.db().beginTx()) {
            tx.createNode(Edges.V).setProperty("id", 0L);
            tx.commit();
        }
    }

    private static void commitOne(GraphDatabaseService db, long id) {
        while (true) {
            try (Transaction tx = db.beginTx()) {
                Node seed = tx.findNode(Edges.V, "id", 0L);
                Node n = tx.createNode(Edges.V);
                n.setProperty("id", id);
                n.createRelationshipTo(seed, Edges.E);
                tx.commit();
                return;
            } catch (TransientFailureException e) {
                // aborted before commit: nothing was acknowledged, so try again
            }
        }
    }

    /** Runs `threads` committers for `duration`; thread t uses ids `first + t * 10^9 + k`. */
    long run(int threads, Duration duration, long first) throws Exception {
        GraphDatabaseService db = server.db();
        long deadline = System.nanoTime() + duration.toNanos();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Long>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long base = first + t * 1_000_000_000L;
                done.add(pool.submit(() -> {
                    long k = 0;
                    while (System.nanoTime() < deadline) {
                        commitOne(db, base + k);
                        k++;
                    }
                    return k;
                }));
            }
            long total = 0;
            for (Future<Long> f : done) {
                total += f.get();
            }
            return total;
        } finally {
            pool.shutdown();
        }
    }
}
