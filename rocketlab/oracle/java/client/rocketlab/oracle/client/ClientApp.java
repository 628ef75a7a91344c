package rocketlab.oracle.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * rocketlab's client application: the unchanged RocketMQ 4.9.5 client (DefaultMQProducer, DefaultMQPullConsumer,
 * DefaultLitePullConsumer, DefaultMQPushConsumer) in one JVM, driven by JSON lines.
 *
 * <p>The protocol of {@code rocketlab.oracle.Main}: one command per stdin line ({@code {"cmd": NAME, ...}}), one
 * reply per command on stdout ({@code {"ok": true, ...}} or {@code {"ok": false, "error": "..."}}). What the
 * producers and consumers see is printed as it happens, one line each, with {@code "event"}: {@code "send"} (one
 * per message sent: status or error, ids, queue, offset) and {@code "recv"} (one per message a consumer is
 * handed). End of input shuts every client down and exits. The Python side is {@code rocketlab.oracle.client_app}.
 */
public final class ClientApp {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out),
        false, StandardCharsets.UTF_8);
    static final long T0 = System.nanoTime();

    private ClientApp() {
    }

    static synchronized void emit(JsonNode node) {
        OUT.println(node.toString());
        OUT.flush();
    }

    /** Microseconds since this JVM started (one clock for sends and receipts). */
    static long micros() {
        return (System.nanoTime() - T0) / 1000;
    }

    static ObjectNode ok() {
        ObjectNode n = JSON.createObjectNode();
        n.put("ok", true);
        return n;
    }

    static ObjectNode event(String kind) {
        ObjectNode n = JSON.createObjectNode();
        n.put("event", kind);
        n.put("t_us", micros());
        return n;
    }

    static String oneLine(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String msg = String.valueOf(root.getMessage()).split("\n")[0];
        return root.getClass().getSimpleName() + ": " + msg;
    }

    public static void main(String[] args) throws Exception {
        System.setOut(System.err);  // what the libraries print goes to stderr; stdout carries our JSON only
        Commands commands = new Commands();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ObjectNode hello = ok();
        hello.put("ready", true);
        hello.put("release", org.apache.rocketmq.common.MQVersion.getVersionDesc(
            org.apache.rocketmq.common.MQVersion.CURRENT_VERSION));
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
                err.put("error", oneLine(e));
                reply = err;
            }
            emit(reply);
        }
        commands.closeAll();
        OUT.flush();
        Runtime.getRuntime().halt(0);
    }
}
