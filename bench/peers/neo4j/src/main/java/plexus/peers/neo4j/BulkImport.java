/*
 * Neo4j's offline bulk importer (what `neo4j-admin database import full` runs), driven in this JVM, plus what it
 * needs from a headerless edge list: the distinct ids of each column, written as node files.
 *
 * The importer writes the store files directly (no transaction log per record) and builds the counts store; it runs
 * on a database that is not started, so callers stop the DBMS first and start it again afterwards. Header files
 * (one line each) sit beside the node files; the data file itself is read in place.
 */
package plexus.peers.neo4j;

import java.io.BufferedInputStream;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.neo4j.cli.ExecutionContext;
import org.neo4j.importer.ImportCommand;
import org.neo4j.io.fs.DefaultFileSystemAbstraction;
import picocli.CommandLine;

final class BulkImport {
    private BulkImport() {}

    /** The sorted distinct values of each of the first `columns` integer columns of a headerless CSV. */
    static long[][] distinctColumns(Path csv, int columns) throws IOException {
        long[][] values = new long[columns][1 << 16];
        int n = 0;
        try (InputStream in = new BufferedInputStream(Files.newInputStream(csv), 1 << 20)) {
            int column = 0;
            long value = 0;
            boolean negative = false;
            boolean inNumber = false;
            int c;
            while ((c = in.read()) != -1) {
                if (c >= '0' && c <= '9' && column < columns) {
                    value = value * 10 + (c - '0');
                    inNumber = true;
                } else if (c == '-' && column < columns) {
                    negative = true;
                } else if (c == ',' || c == '\n') {
                    if (column < columns && inNumber) {
                        if (n == values[column].length) {
                            for (int k = 0; k < columns; k++) {
                                values[k] = Arrays.copyOf(values[k], n * 2);
                            }
                        }
                        values[column][n] = negative ? -value : value;
                    }
                    value = 0;
                    negative = false;
                    inNumber = false;
                    if (c == '\n') {
                        column = 0;
                        n++;
                    } else {
                        column++;
                    }
                }
            }
            if (column > 0) {
                n++; // a last line without a newline
            }
        }
        long[][] out = new long[columns][];
        for (int k = 0; k < columns; k++) {
            out[k] = distinct(Arrays.copyOf(values[k], n));
        }
        return out;
    }

    /** Sorts `a` and drops repeats. */
    static long[] distinct(long[] a) {
        Arrays.sort(a);
        int m = 0;
        for (int i = 0; i < a.length; i++) {
            if (m == 0 || a[i] != a[m - 1]) {
                a[m++] = a[i];
            }
        }
        return Arrays.copyOf(a, m);
    }

    static long[] union(long[] a, long[] b) {
        long[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return distinct(both);
    }

    /** Writes one id per line. */
    static void writeIds(Path file, long[] ids) throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
            for (long id : ids) {
                w.write(Long.toString(id));
                w.write('\n');
            }
        }
    }

    static void writeHeader(Path file, String header) throws IOException {
        Files.writeString(file, header + "\n", StandardCharsets.US_ASCII);
    }

    /**
     * Runs `database import full` for the default database under `home`, replacing whatever is there.
     * `nodes` and `relationships` are the importer's `LABEL=header,file` / `TYPE=header,file` groups.
     */
    static void run(Path home, List<String> nodes, List<String> relationships) throws IOException {
        List<String> args = new ArrayList<>();
        args.add("neo4j");
        for (String group : nodes) {
            args.add("--nodes=" + group);
        }
        for (String group : relationships) {
            args.add("--relationships=" + group);
        }
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
}
