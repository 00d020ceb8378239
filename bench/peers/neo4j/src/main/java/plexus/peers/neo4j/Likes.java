/*
 * The recommendation traversal (GuancialeDB's likes graph): a fresh store per parameter row, loaded with the bulk
 * importer, `(:Person {id})-[:LIKES]->(:Item {id})` with a uniqueness constraint on `Person.id`, and one
 * parameterised Cypher query per recommendation.
 */
package plexus.peers.neo4j;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;

final class Likes {
    static final Label PERSON = Label.label("Person");

    /**
     * Paths p -> item <- other -> rec with other != p and rec not liked by p, counted per rec: the top 10 by count
     * descending, then item id ascending. Counted as Plexus's own Cypher benchmark counts them (bench/src/cypher.rs):
     * the items each other shares with p first, summed over the others' likes; p's own likes are dropped after that
     * sum, once per candidate item rather than once per path (the planner then checks them only for the top rows).
     */
    static final String RECOMMEND = String.join("\n",
            "MATCH (me:Person {id: $id})-[:LIKES]->(:Item)<-[:LIKES]-(other) WHERE other <> me",
            "WITH me, other, count(*) AS shared",
            "MATCH (other)-[:LIKES]->(rec)",
            "WITH me, rec, sum(shared) AS n",
            "WHERE NOT EXISTS { (me)-[:LIKES]->(rec) }",
            "RETURN rec.id AS item, n",
            "ORDER BY n DESC, item ASC",
            "LIMIT 10");

    private final PeerServer server;

    Likes(PeerServer server) {
        this.server = server;
    }

    /** Stops whatever store is open and bulk-loads the `person,item` lines at `csv` into a fresh one at `dir`. */
    void load(Path csv, Path dir) throws IOException {
        server.stop();
        Path home = dir.toAbsolutePath();
        Path input = home.resolve("import-input");
        Files.createDirectories(input);
        long[][] columns = BulkImport.distinctColumns(csv, 2);
        BulkImport.writeIds(input.resolve("people.csv"), columns[0]);
        BulkImport.writeIds(input.resolve("items.csv"), columns[1]);
        BulkImport.writeHeader(input.resolve("people-header.csv"), "id:ID(Person)");
        BulkImport.writeHeader(input.resolve("items-header.csv"), "id:ID(Item)");
        BulkImport.writeHeader(input.resolve("likes-header.csv"), ":START_ID(Person),:END_ID(Item)");
        BulkImport.run(home,
                List.of("Person=" + input.resolve("people-header.csv") + "," + input.resolve("people.csv"),
                        "Item=" + input.resolve("items-header.csv") + "," + input.resolve("items.csv")),
                List.of("LIKES=" + input.resolve("likes-header.csv") + "," + csv.toAbsolutePath()));
        for (String f : new String[] {"people.csv", "items.csv", "people-header.csv", "items-header.csv",
                "likes-header.csv"}) {
            Files.delete(input.resolve(f));
        }
        Files.delete(input);
        server.start(home);
        server.uniqueIds(PERSON);
    }

    List<long[]> recommend(long person) {
        List<long[]> top = new ArrayList<>();
        try (Transaction tx = server.db().beginTx();
                Result rows = tx.execute(RECOMMEND, Map.of("id", person))) {
            while (rows.hasNext()) {
                Map<String, Object> row = rows.next();
                top.add(new long[] {((Number) row.get("item")).longValue(), ((Number) row.get("n")).longValue()});
            }
        }
        return top;
    }
}
