package rocketlab.oracle.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

/** The producer benchmark: {@code threads} threads share one producer and send {@code count} messages of
 * {@code size} bytes (synchronous sends); the reply has messages/s and the latency percentiles in ms. */
final class Bench {
    private Bench() {
    }

    static JsonNode produce(DefaultMQProducer p, JsonNode req) throws Exception {
        String topic = req.path("topic").asText();
        int threads = req.path("threads").asInt(4);
        int count = req.path("count").asInt(1000);
        byte[] body = new byte[req.path("size").asInt(1024)];
        Arrays.fill(body, (byte) 'x');
        long[] lat = new long[count];
        AtomicInteger next = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        Thread[] ts = new Thread[threads];
        long t0 = System.nanoTime();
        for (int k = 0; k < threads; k++) {
            ts[k] = new Thread(() -> {
                int i;
                while ((i = next.getAndIncrement()) < count) {
                    long s = System.nanoTime();
                    try {
                        if (p.send(new Message(topic, body)).getSendStatus() != SendStatus.SEND_OK) {
                            failed.incrementAndGet();
                        }
                    } catch (Exception e) {
                        failed.incrementAndGet();
                    }
                    lat[i] = System.nanoTime() - s;
                }
            });
            ts[k].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        Arrays.sort(lat);
        ObjectNode r = ClientApp.ok();
        r.put("count", count);
        r.put("threads", threads);
        r.put("failed", failed.get());
        r.put("seconds", secs);
        r.put("msgs_per_s", count / secs);
        r.put("p50_ms", lat[count / 2] / 1e6);
        r.put("p99_ms", lat[Math.min(count - 1, (int) Math.ceil(count * 0.99) - 1)] / 1e6);
        return r;
    }
}
