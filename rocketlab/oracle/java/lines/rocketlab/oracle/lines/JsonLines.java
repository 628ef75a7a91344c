package rocketlab.oracle.lines;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The JSON-lines protocol of rocketlab's JVMs (the oracle driver {@code rocketlab.oracle.Main} and the client
 * application {@code rocketlab.oracle.client.ClientApp}), compiled into both: one command per stdin line
 * ({@code {"cmd": NAME, ...}}), one reply per command on stdout ({@code {"ok": true, ...}} or
 * {@code {"ok": false, "error": "..."}}), lines sent on their own carry {@code "event"}; whatever the libraries
 * print goes to stderr. End of input closes what is open and exits. The Python side is
 * {@code rocketlab.oracle.jvm.OracleProcess}.
 */
public final class JsonLines {
    public static final ObjectMapper JSON = new ObjectMapper();
    private static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out),
        false, StandardCharsets.UTF_8);

    /** What a JVM serves: its commands, whether one asked it to stop, and closing what they opened. */
    public interface Commands {
        JsonNode run(String cmd, JsonNode req) throws Exception;

        default boolean exitRequested() {
            return false;
        }

        void closeAll();
    }

    private JsonLines() {
    }

    /** Writes one JSON line to stdout (the only thing that may write there). */
    public static synchronized void emit(JsonNode node) {
        OUT.println(node.toString());
        OUT.flush();
    }

    public static ObjectNode ok() {
        ObjectNode n = JSON.createObjectNode();
        n.put("ok", true);
        return n;
    }

    /** The innermost cause of {@code e}. */
    public static Throwable root(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root;
    }

    /** Sends the hello line ({@code {"ok": true, "ready": true, "release": RELEASE, "java": VERSION}}), then
     * answers each command line with the commands {@code make} builds (once stdout is ours); a command that
     * throws is answered with {@code error(exception)}. At the end of input (or once a command asked to exit)
     * closes everything and halts. */
    public static void serve(String release, Supplier<Commands> make, Function<Throwable, String> error)
        throws Exception {
        System.setOut(System.err);  // what the libraries print goes to stderr; stdout carries our JSON only
        Commands commands = make.get();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ObjectNode hello = ok();
        hello.put("ready", true);
        hello.put("release", release);
        hello.put("java", System.getProperty("java.version"));
        emit(hello);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode reply;
            try {
                JsonNode request = JSON.readTree(line);
                reply = commands.run(request.path("cmd").asText(), request);
            } catch (Throwable e) {
                ObjectNode err = JSON.createObjectNode();
                err.put("ok", false);
                err.put("error", error.apply(e));
                reply = err;
            }
            emit(reply);
            if (commands.exitRequested()) {
                break;
            }
        }
        commands.closeAll();
        OUT.flush();
        Runtime.getRuntime().halt(0);
    }
}
