/*
 * The LDBC SNB short reads: the CsvComposite layout (static/ and dynamic/ of `|`-separated files with a header row)
 * loaded into a fresh store with Neo4j's offline bulk importer, and the `cypher` and `cypher_many` commands, which run
 * a parameterised query (for one or for each of several parameter objects) in a read transaction and return its
 * rows.
 *
 * The mapping is the one of `plexus import --ldbc` (crates/plexus-import/src/ldbc.rs) and of LDBC's Cypher
 * implementation: labels Person, Forum, Post and Comment (both also Message), Tag, TagClass, Place and Organisation
 * (also City, Country, Continent, Company or University from their `type`), relationship types KNOWS, HAS_CREATOR,
 * REPLY_OF, ...; properties named as in the headers, dates as longs (epoch milliseconds), `language` and `email` of
 * persons as string arrays; each entity kind its own id space. The importer needs its own header syntax and no
 * header row in the data, so each file is copied once into the import's input directory with a rewritten header
 * (and the `type` column's values capitalised into labels); the copying is part of the load. Range indexes on
 * `Person.id` and `Message.id` serve the short reads' lookups.
 */
package plexus.peers.neo4j;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.neo4j.cli.ExecutionContext;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;
import org.neo4j.importer.ImportCommand;
import org.neo4j.io.fs.DefaultFileSystemAbstraction;
import picocli.CommandLine;

final class Ldbc {
    /** An entity file stem: its id space, its labels, and the column whose value is a further label (or null). */
    record Entity(String space, String labels, String labelColumn) {}

    /** A relation file stem: its relationship type and the id spaces of its two ends. */
    record Relation(String type, String src, String dst) {}

    static final Map<String, Entity> ENTITIES = Map.of(
            "person", new Entity("Person", "Person", null),
            "forum", new Entity("Forum", "Forum", null),
            "post", new Entity("Post", "Post:Message", null),
            "comment", new Entity("Comment", "Comment:Message", null),
            "tag", new Entity("Tag", "Tag", null),
            "tagclass", new Entity("TagClass", "TagClass", null),
            "place", new Entity("Place", "Place", "type"),
            "organisation", new Entity("Organisation", "Organisation", "type"));

    static final Map<String, Relation> RELATIONS = new LinkedHashMap<>();

    static {
        String[][] table = {
            {"comment_hasCreator_person", "HAS_CREATOR", "Comment", "Person"},
            {"comment_hasTag_tag", "HAS_TAG", "Comment", "Tag"},
            {"comment_isLocatedIn_place", "IS_LOCATED_IN", "Comment", "Place"},
            {"comment_replyOf_comment", "REPLY_OF", "Comment", "Comment"},
            {"comment_replyOf_post", "REPLY_OF", "Comment", "Post"},
            {"forum_containerOf_post", "CONTAINER_OF", "Forum", "Post"},
            {"forum_hasMember_person", "HAS_MEMBER", "Forum", "Person"},
            {"forum_hasModerator_person", "HAS_MODERATOR", "Forum", "Person"},
            {"forum_hasTag_tag", "HAS_TAG", "Forum", "Tag"},
            {"person_hasInterest_tag", "HAS_INTEREST", "Person", "Tag"},
            {"person_isLocatedIn_place", "IS_LOCATED_IN", "Person", "Place"},
            {"person_knows_person", "KNOWS", "Person", "Person"},
            {"person_likes_comment", "LIKES", "Person", "Comment"},
            {"person_likes_post", "LIKES", "Person", "Post"},
            {"person_studyAt_organisation", "STUDY_AT", "Person", "Organisation"},
            {"person_workAt_organisation", "WORK_AT", "Person", "Organisation"},
            {"post_hasCreator_person", "HAS_CREATOR", "Post", "Person"},
            {"post_hasTag_tag", "HAS_TAG", "Post", "Tag"},
            {"post_isLocatedIn_place", "IS_LOCATED_IN", "Post", "Place"},
            {"organisation_isLocatedIn_place", "IS_LOCATED_IN", "Organisation", "Place"},
            {"place_isPartOf_place", "IS_PART_OF", "Place", "Place"},
            {"tag_hasType_tagclass", "HAS_TYPE", "Tag", "TagClass"},
            {"tagclass_isSubclassOf_tagclass", "IS_SUBCLASS_OF", "TagClass", "TagClass"},
        };
        for (String[] r : table) {
            RELATIONS.put(r[0], new Relation(r[1], r[2], r[3]));
        }
    }

    static final Pattern PART = Pattern.compile("(.+)_\\d+_\\d+\\.csv");

    private final PeerServer server;

    Ldbc(PeerServer server) {
        this.server = server;
    }

    static String propertyType(String name, boolean person) {
        switch (name) {
            case "creationDate": case "birthday": case "joinDate":
                return "long";
            case "length": case "classYear": case "workFrom":
                return "int";
            case "language": case "email":
                return person ? "string[]" : "string";
            default:
                return "string";
        }
    }

    /** Stops whatever store is open and bulk-loads the layout under `data` into a fresh store at `dir`. */
    void load(Path data, Path dir) throws IOException {
        server.stop();
        Path home = dir.toAbsolutePath();
        Path input = home.resolve("import-input");
        Files.createDirectories(input);
        List<String> nodes = new ArrayList<>();
        List<String> relationships = new ArrayList<>();
        for (String sub : new String[] {"static", "dynamic"}) {
            List<Path> files;
            try (Stream<Path> list = Files.list(data.resolve(sub))) {
                files = list.sorted().toList();
            }
            for (Path file : files) {
                Matcher m = PART.matcher(file.getFileName().toString());
                if (!m.matches()) {
                    continue;
                }
                String stem = m.group(1);
                Entity e = ENTITIES.get(stem);
                Relation r = RELATIONS.get(stem);
                if (e == null && r == null) {
                    throw new IOException(file + " is not part of the LDBC SNB layout");
                }
                Path copy = input.resolve(file.getFileName());
                String group = copy(file, copy, e, r, stem.equals("person"));
                if (e != null) {
                    nodes.add(e.labels() + "=" + group);
                } else {
                    relationships.add(r.type() + "=" + group);
                }
            }
        }
        importFull(home, nodes, relationships);
        try (Stream<Path> list = Files.list(input)) {
            for (Path f : list.toList()) {
                Files.delete(f);
            }
        }
        Files.delete(input);
        server.start(home);
        try (Transaction tx = server.db().beginTx()) {
            tx.execute("CREATE INDEX ldbc_person_id FOR (n:Person) ON (n.id)").close();
            tx.execute("CREATE INDEX ldbc_message_id FOR (n:Message) ON (n.id)").close();
            tx.commit();
        }
        try (Transaction tx = server.db().beginTx()) {
            tx.schema().awaitIndexesOnline(1, TimeUnit.HOURS);
        }
    }

    /**
     * Writes the rows of `file` without its header row to `copy`, with `copy`'s header (in the importer's syntax) in
     * a file of its own; returns the importer's `header,data` group.
     */
    static String copy(Path file, Path copy, Entity e, Relation r, boolean person) throws IOException {
        Path header = copy.resolveSibling("header-" + copy.getFileName());
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8);
                BufferedWriter out = Files.newBufferedWriter(copy, StandardCharsets.UTF_8)) {
            String[] fields = in.readLine().split("\\|", -1);
            List<String> typed = new ArrayList<>();
            int labelColumn = -1;
            for (int i = 0; i < fields.length; i++) {
                String f = fields[i];
                if (r != null && i < 2) {
                    typed.add(i == 0 ? ":START_ID(" + r.src() + ")" : ":END_ID(" + r.dst() + ")");
                } else if (e != null && f.equals("id")) {
                    typed.add("id:ID(" + e.space() + ")");
                } else if (e != null && f.equals(e.labelColumn())) {
                    typed.add(":LABEL");
                    labelColumn = i;
                } else {
                    typed.add(f + ":" + propertyType(f, person));
                }
            }
            Files.writeString(header, String.join("|", typed) + "\n", StandardCharsets.UTF_8);
            String line;
            while ((line = in.readLine()) != null) {
                if (labelColumn >= 0) {
                    String[] row = line.split("\\|", -1);
                    String v = row[labelColumn];
                    row[labelColumn] = v.isEmpty() ? v : Character.toUpperCase(v.charAt(0)) + v.substring(1);
                    line = String.join("|", row);
                }
                out.write(line);
                out.write('\n');
            }
        }
        return header + "," + copy;
    }

    /** `database import full` of the default database under `home`, for `|`-separated input with `;` in arrays. */
    static void importFull(Path home, List<String> nodes, List<String> relationships) throws IOException {
        List<String> args = new ArrayList<>();
        args.add("neo4j");
        for (String group : nodes) {
            args.add("--nodes=" + group);
        }
        for (String group : relationships) {
            args.add("--relationships=" + group);
        }
        args.add("--delimiter=|");
        args.add("--array-delimiter=;");
        args.add("--id-type=integer");
        args.add("--overwrite-destination=true");
        args.add("--report-file=" + home.resolve("import.report"));
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        PrintStream sink = new PrintStream(log, true, StandardCharsets.UTF_8);
        ExecutionContext context = new ExecutionContext(home, home.resolve("conf"), sink, sink,
                new DefaultFileSystemAbstraction());
        int code = new CommandLine(new ImportCommand.Full(context)).execute(args.toArray(new String[0]));
        System.err.print(log.toString(StandardCharsets.UTF_8));
        if (code != 0) {
            throw new IOException("bulk import failed (" + code + "): " + log.toString(StandardCharsets.UTF_8));
        }
        Files.deleteIfExists(home.resolve("import.report"));
    }

    /** `cypher` for each parameter object of the JSON array `params` in turn, each in its own transaction. */
    List<List<List<Object>>> cypherMany(String query, JsonNode params) {
        List<List<List<Object>>> out = new ArrayList<>(params.size());
        for (JsonNode p : params) {
            out.add(cypher(query, p));
        }
        return out;
    }

    /** Runs `query` with `params` (a JSON object) in a read transaction: its rows, each a list in column order. */
    List<List<Object>> cypher(String query, JsonNode params) {
        Map<String, Object> p = new LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = params.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> f = it.next();
            JsonNode v = f.getValue();
            p.put(f.getKey(), v.isIntegralNumber() ? (Object) v.asLong()
                    : v.isNumber() ? (Object) v.asDouble()
                    : v.isBoolean() ? (Object) v.asBoolean()
                    : v.isNull() ? null : v.asText());
        }
        List<List<Object>> rows = new ArrayList<>();
        try (Transaction tx = server.db().beginTx(); Result result = tx.execute(query, p)) {
            List<String> columns = result.columns();
            while (result.hasNext()) {
                Map<String, Object> row = result.next();
                List<Object> values = new ArrayList<>(columns.size());
                for (String c : columns) {
                    values.add(row.get(c));
                }
                rows.add(values);
            }
        }
        return rows;
    }
}
