package rocketlab.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * rocketlab's oracle driver: one JVM running the real RocketMQ / DLedger code, driven by JSON lines.
 *
 * <p>Reads one JSON object per line on stdin ({@code {"cmd": NAME, ...}}), answers each with one JSON
 * object on stdout ({@code {"ok": true, ...}} or {@code {"ok": false, "error": "..."}}). Unsolicited
 * lines carry {@code "event"} instead of {@code "ok"}. Logging goes to stderr. End of input closes what
 * is open and exits 0. The Python side is {@code rocketlab.oracle.jvm}.
 */
public final class Main {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);

    private Main() {
    }

    /** Writes one JSON line to stdout (the only thing that may write there). */
    static synchronized void emit(JsonNode node) {
        OUT.println(node.toString());
        OUT.flush();
    }

    static ObjectNode ok() {
        ObjectNode n = JSON.createObjectNode();
        n.put("ok", true);
        return n;
    }

    public static void main(String[] args) throws Exception {
        // Everything the libraries print goes to stderr; stdout carries our JSON only.
        System.setOut(System.err);
        Commands commands = new Commands();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ObjectNode hello = ok();
        hello.put("ready", true);
        hello.put("release", Compat.RELEASE);
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
                Throwable root = e;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                err.put("error", root.getClass().getSimpleName() + ": " + root.getMessage());
                reply = err;
            }
            emit(reply);
            if (commands.exitRequested) {
                break;
            }
        }
        commands.closeAll();
        OUT.flush();
        Runtime.getRuntime().halt(0);
    }
}
