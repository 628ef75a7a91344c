package rocketlab.oracle.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import rocketlab.oracle.lines.JsonLines;

/**
 * rocketlab's client application: the unchanged RocketMQ 4.9.5 client (DefaultMQProducer, DefaultMQPullConsumer,
 * DefaultLitePullConsumer, DefaultMQPushConsumer) in one JVM, driven by JSON lines.
 *
 * <p>The protocol of {@link JsonLines} (as {@code rocketlab.oracle.Main}): one command per stdin line ({@code {"cmd": NAME, ...}}), one
 * reply per command on stdout ({@code {"ok": true, ...}} or {@code {"ok": false, "error": "..."}}). What the
 * producers and consumers see is printed as it happens, one line each, with {@code "event"}: {@code "send"} (one
 * per message sent: status or error, ids, queue, offset) and {@code "recv"} (one per message a consumer is
 * handed). End of input shuts every client down and exits. The Python side is {@code rocketlab.oracle.client_app}.
 */
public final class ClientApp {
    static final ObjectMapper JSON = JsonLines.JSON;
    static final long T0 = System.nanoTime();

    private ClientApp() {
    }

    static void emit(JsonNode node) {
        JsonLines.emit(node);
    }

    /** Microseconds since this JVM started (one clock for sends and receipts). */
    static long micros() {
        return (System.nanoTime() - T0) / 1000;
    }

    static ObjectNode ok() {
        return JsonLines.ok();
    }

    static ObjectNode event(String kind) {
        ObjectNode n = JSON.createObjectNode();
        n.put("event", kind);
        n.put("t_us", micros());
        return n;
    }

    static String oneLine(Throwable e) {
        Throwable root = JsonLines.root(e);
        String msg = String.valueOf(root.getMessage()).split("\n")[0];
        return root.getClass().getSimpleName() + ": " + msg;
    }

    public static void main(String[] args) throws Exception {
        JsonLines.serve(org.apache.rocketmq.common.MQVersion.getVersionDesc(
            org.apache.rocketmq.common.MQVersion.CURRENT_VERSION), Commands::new, ClientApp::oneLine);
    }
}
