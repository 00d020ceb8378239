/*
 * The peer's JVM side: embeds Neo4j Community and answers the peer benchmark's commands, one JSON object per line
 * on stdin, one JSON object per line on stdout ({"ok": true, "result": ...} or {"ok": false, "error": ...}).
 *
 * What it owns: at most one embedded DBMS at a time (DatabaseManagementServiceBuilder on a home directory, Neo4j's
 * defaults except that the Bolt connector is off unless a command asks for it), and the dispatch of commands to
 * Edges, Likes, Commits and Ldbc. Query arrays arrive as files of little-endian int64/float64 (numpy `tofile`), never as
 * JSON lists. Anything else the JVM prints goes to stderr, so stdout carries only the protocol.
 */
package plexus.peers.neo4j;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.StringWriter;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Transaction;
import org.neo4j.kernel.internal.Version;

public final class PeerServer {
    static final ObjectMapper JSON = new ObjectMapper();

    private DatabaseManagementService dbms;
    private GraphDatabaseService db;
    private Path home;
    private int boltPort;
    private final Ldbc ldbc = new Ldbc(this);

    /** Starts the DBMS on `home` (a fresh store if the directory is empty). */
    GraphDatabaseService start(Path dir) {
        stop();
        home = dir.toAbsolutePath();
        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home);
        builder.setConfig(BoltConnector.enabled, boltPort > 0);
        if (boltPort > 0) {
            builder.setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", boltPort));
            builder.setConfig(GraphDatabaseSettings.auth_enabled, false);
        }
        dbms = builder.build();
        db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        return db;
    }

    /** Shuts the DBMS down (checkpointing the store); a no-op when none is running. */
    void stop() {
        if (dbms != null) {
            dbms.shutdown();
            dbms = null;
            db = null;
        }
    }

    GraphDatabaseService db() {
        if (db == null) {
            throw new IllegalStateException("no store is open");
        }
        return db;
    }

    Path home() {
        return home;
    }

    /** Creates the uniqueness constraint on `(:label {id})` (backed by a range index) and waits until it is online. */
    void uniqueIds(Label label) {
        try (Transaction tx = db().beginTx()) {
            tx.schema().constraintFor(label).assertPropertyIsUnique("id").create();
            tx.commit();
        }
        try (Transaction tx = db().beginTx()) {
            tx.schema().awaitIndexesOnline(1, TimeUnit.HOURS);
        }
    }

    /** How many entities a count-store query (`... RETURN count(x) AS n`) finds. */
    long count(String cypher) {
        try (Transaction tx = db().beginTx()) {
            return ((Number) tx.execute(cypher).columnAs("n").next()).longValue();
        }
    }

    static long[] longs(JsonNode request, String field) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(Path.of(request.get(field).asText())))
                .order(ByteOrder.LITTLE_ENDIAN);
        long[] out = new long[buf.remaining() / 8];
        buf.asLongBuffer().get(out);
        return out;
    }

    static double[] doubles(JsonNode request, String field) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(Path.of(request.get(field).asText())))
                .order(ByteOrder.LITTLE_ENDIAN);
        double[] out = new double[buf.remaining() / 8];
        buf.asDoubleBuffer().get(out);
        return out;
    }

    private Object handle(JsonNode r, Edges edges, Likes likes, Commits commits) throws Exception {
        String cmd = r.get("cmd").asText();
        switch (cmd) {
            case "version":
                return Version.getNeo4jVersion();
            case "bolt":
                boltPort = r.get("port").asInt();
                return null;
            case "open":
                start(Path.of(r.get("dir").asText()));
                return null;
            case "close":
                stop();
                return null;
            case "import_edges":
                edges.importEdges(Path.of(r.get("csv").asText()));
                return null;
            case "edge_count":
                return count("MATCH ()-[r:E]->() RETURN count(r) AS n");
            case "find_edges":
                return edges.findEdges(longs(r, "src"), longs(r, "dst"));
            case "out_edges":
                return edges.edges(longs(r, "v"), true);
            case "in_edges":
                return edges.edges(longs(r, "v"), false);
            case "unique_neighbours":
                return edges.uniqueNeighbours(longs(r, "v"));
            case "out_degree_weight":
                return edges.degreeWeight(longs(r, "v"), true);
            case "in_degree_weight":
                return edges.degreeWeight(longs(r, "v"), false);
            case "upsert_edges":
                edges.upsert(longs(r, "src"), longs(r, "dst"), doubles(r, "weight"), r.get("batch").asInt());
                return null;
            case "remove_edges":
                edges.remove(longs(r, "src"), longs(r, "dst"), r.get("batch").asInt());
                return null;
            case "load_likes":
                likes.load(Path.of(r.get("csv").asText()), Path.of(r.get("dir").asText()));
                return null;
            case "recommend":
                return likes.recommend(r.get("person").asLong());
            case "prepare_commits":
                commits.prepare(Path.of(r.get("dir").asText()));
                return null;
            case "concurrent_commits":
                Duration seconds = Duration.ofNanos((long) (r.get("seconds").asDouble() * 1e9));
                return commits.run(r.get("threads").asInt(), seconds, r.get("first_id").asLong());
            case "commit_count":
                return count("MATCH (n:V) RETURN count(n) AS n");
            case "load_ldbc":
                ldbc.load(Path.of(r.get("data").asText()), Path.of(r.get("dir").asText()));
                return null;
            case "cypher":
                return ldbc.cypher(r.get("query").asText(), r.get("params"));
            case "cypher_many":
                return ldbc.cypherMany(r.get("query").asText(), r.get("params"));
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    public static void main(String[] args) throws IOException {
        PrintStream protocol = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        PeerServer server = new PeerServer();
        Edges edges = new Edges(server);
        Likes likes = new Likes(server);
        Commits commits = new Commits(server);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode reply = JSON.createObjectNode();
            boolean quit = false;
            try {
                JsonNode request = JSON.readTree(line);
                quit = request.get("cmd").asText().equals("quit");
                reply.put("ok", true);
                reply.set("result", JSON.valueToTree(quit ? null : server.handle(request, edges, likes, commits)));
            } catch (Throwable e) {
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                e.printStackTrace();
                reply.removeAll();
                reply.put("ok", false);
                reply.put("error", e.toString());
                reply.put("trace", trace.toString());
            }
            if (quit) {
                server.stop();
            }
            protocol.println(reply.toString());
            protocol.flush();
            if (quit) {
                break;
            }
        }
        server.stop();
    }
}
