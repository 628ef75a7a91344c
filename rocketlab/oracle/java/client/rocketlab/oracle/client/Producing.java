package rocketlab.oracle.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageClientIDSetter;
import org.apache.rocketmq.common.message.MessageDecoder;

/**
 * One producing run: {@code count} messages of {@link Shapes} to {@code topic}, synchronously, one {@code send}
 * event per message. With {@code batch_every} N > 0, every N-th step sends a batch of {@code batch_size}
 * messages in one SEND_BATCH_MESSAGE (each message of it gets its own event). {@code interval_ms} paces the
 * sends; {@code size} > 0 gives every body that size; {@code background} runs it on its own thread until done or stopped.
 */
final class Producing extends Thread {
    final String run;
    private final DefaultMQProducer producer;
    private final String topic;
    private final int count;
    private final long seed;
    private final boolean big;
    private final int batchEvery;
    private final int batchSize;
    private final long intervalMs;
    private final int fixedSize;
    private volatile boolean halted;
    private int sent;
    private int ok;
    private int failed;

    Producing(DefaultMQProducer producer, JsonNode req) {
        super("produce-" + req.path("run").asText());
        setDaemon(true);
        this.producer = producer;
        this.run = req.path("run").asText("run");
        this.topic = req.path("topic").asText();
        this.count = req.path("count").asInt();
        this.seed = req.path("seed").asLong(1);
        this.big = req.path("big").asBoolean(false);
        this.batchEvery = req.path("batch_every").asInt(0);
        this.batchSize = req.path("batch_size").asInt(4);
        this.intervalMs = req.path("interval_ms").asLong(0);
        this.fixedSize = req.path("size").asInt(0);
    }

    void halt() {
        halted = true;
    }

    @Override
    public void run() {
        int i = 0;
        int step = 0;
        while (i < count && !halted) {
            int n = batchEvery > 0 && step % batchEvery == batchEvery - 1 ? Math.min(batchSize, count - i) : 1;
            List<Message> msgs = new ArrayList<>();
            for (int k = 0; k < n; k++) {
                Message m = Shapes.message(topic, seed, i + k, big && n == 1, run);
                if (fixedSize > 0) {
                    m.setBody(Shapes.body(seed, 0, fixedSize));  // one size for all (the latency benchmark)
                }
                msgs.add(m);
            }
            send(msgs, i, n > 1);
            i += n;
            step++;
            if (intervalMs > 0) {
                try {
                    Thread.sleep(intervalMs);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private void send(List<Message> msgs, int first, boolean batch) {
        long start = ClientApp.micros();
        SendResult r = null;
        String error = null;
        try {
            r = batch ? producer.send(msgs) : producer.send(msgs.get(0));
        } catch (Throwable e) {
            error = ClientApp.oneLine(e);
        }
        String[] offsetIds = r != null && r.getOffsetMsgId() != null ? r.getOffsetMsgId().split(",") : new String[0];
        for (int k = 0; k < msgs.size(); k++) {
            Message m = msgs.get(k);
            ObjectNode e = ClientApp.event("send");
            e.put("run", run);
            e.put("i", first + k);
            e.put("start_us", start);
            e.put("batch", batch);
            e.put("uniq", MessageClientIDSetter.getUniqID(m));
            Shapes.describe(e, m);
            sent++;
            if (r == null) {
                e.put("error", error);
                failed++;
            } else {
                e.put("status", r.getSendStatus().name());
                e.put("broker", r.getMessageQueue().getBrokerName());
                e.put("queue", r.getMessageQueue().getQueueId());
                e.put("queue_offset", r.getQueueOffset() + k);
                String oid = k < offsetIds.length ? offsetIds[k] : "";
                e.put("offset_msg_id", oid);
                e.put("store_host", storeHost(oid));
                if (r.getSendStatus() == SendStatus.SEND_OK) {
                    ok++;
                }
            }
            ClientApp.emit(e);
        }
    }

    static String storeHost(String offsetMsgId) {
        try {
            return String.valueOf(MessageDecoder.decodeMessageId(offsetMsgId).getAddress()).replace("/", "");
        } catch (Exception e) {
            return "";
        }
    }

    JsonNode summary() {
        ObjectNode r = ClientApp.ok();
        r.put("run", run);
        r.put("sent", sent);
        r.put("send_ok", ok);
        r.put("failed", failed);
        return r;
    }
}
