package rocketlab.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import rocketlab.oracle.lines.JsonLines;

/**
 * rocketlab's oracle driver: one JVM running the real RocketMQ / DLedger code, driven by JSON lines.
 *
 * <p>The protocol of {@link JsonLines}: reads one JSON object per line on stdin ({@code {"cmd": NAME, ...}}),
 * answers each with one JSON object on stdout ({@code {"ok": true, ...}} or {@code {"ok": false, "error":
 * "..."}}, the root exception's class and message). Unsolicited lines carry {@code "event"} instead of
 * {@code "ok"}. Logging goes to stderr. End of input (or {@code exit}) closes what is open and exits 0. The
 * Python side is {@code rocketlab.oracle.jvm}.
 */
public final class Main {
    static final ObjectMapper JSON = JsonLines.JSON;

    private Main() {
    }

    /** Writes one JSON line to stdout (the only thing that may write there). */
    static void emit(JsonNode node) {
        JsonLines.emit(node);
    }

    static ObjectNode ok() {
        return JsonLines.ok();
    }

    public static void main(String[] args) throws Exception {
        JsonLines.serve(Compat.RELEASE, Commands::new, e -> {
            Throwable root = JsonLines.root(e);
            return root.getClass().getSimpleName() + ": " + root.getMessage();
        });
    }
}
