package rocketlab.oracle.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.topic.TopicValidator;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import rocketlab.oracle.lines.JsonLines;

/** The commands of {@link ClientApp}: producers by group, consumers by name (see {@link Consumers}). */
final class Commands implements JsonLines.Commands {
    private final Map<String, DefaultMQProducer> producers = new HashMap<>();
    private final Map<String, Producing> runs = new HashMap<>();
    final Consumers consumers = new Consumers();

    @Override
    public JsonNode run(String cmd, JsonNode req) throws Exception {
        switch (cmd) {
            case "produce":
                return produce(req);
            case "stop_produce":
                return stopProduce(req);
            case "empty_body":
                return emptyBody(req);
            case "create_topic":
                producer(req).createTopic(TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC, req.path("topic").asText(),
                    req.path("queues").asInt(4));
                return ClientApp.ok();
            case "query":
                return query(req);
            case "view":
                return view(req);
            case "offsets":
                return offsets(req);
            case "bench_produce":
                return Bench.produce(producer(req), req);
            case "consume":
                return consumers.start(req);
            case "stop_consumer":
                return consumers.stop(req.path("name").asText());
            case "allocation":
                return consumers.allocation(req.path("name").asText());
            case "now":
                ObjectNode now = ClientApp.ok();
                now.put("t_us", ClientApp.micros());
                return now;
            case "stop_producers":
                for (DefaultMQProducer p : producers.values()) {
                    p.shutdown();
                }
                producers.clear();
                return ClientApp.ok();
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    /** The producer of {@code group} (default "app_producer") for {@code namesrv}, started on first use. */
    DefaultMQProducer producer(JsonNode req) throws MQClientException {
        String ns = req.path("namesrv").asText();
        String group = req.path("group").asText("app_producer");
        String key = group + "@" + ns;
        DefaultMQProducer p = producers.get(key);
        if (p == null) {
            p = new DefaultMQProducer(group);
            p.setNamesrvAddr(ns);
            p.setInstanceName("p-" + group + "-" + producers.size() + "-" + ProcessHandle.current().pid());
            p.setPollNameServerInterval(req.path("poll_namesrv_ms").asInt(1000));
            p.setSendMsgTimeout(req.path("send_timeout_ms").asInt(3000));
            p.setRetryTimesWhenSendFailed(req.path("retries").asInt(2));
            p.start();
            producers.put(key, p);
        }
        return p;
    }

    private JsonNode produce(JsonNode req) throws Exception {
        Producing run = new Producing(producer(req), req);
        if (req.path("background").asBoolean(false)) {
            runs.put(run.run, run);
            run.start();
            return ClientApp.ok();
        }
        run.run();
        return run.summary();
    }

    private JsonNode stopProduce(JsonNode req) throws Exception {
        Producing run = runs.remove(req.path("run").asText());
        if (run == null) {
            throw new IllegalArgumentException("no background run " + req.path("run").asText());
        }
        run.halt();
        run.join();
        return run.summary();
    }

    /** The client refuses a 0 B body before sending anything (Validators.checkMessage). */
    private JsonNode emptyBody(JsonNode req) throws Exception {
        ObjectNode r = ClientApp.ok();
        try {
            producer(req).send(new Message(req.path("topic").asText(), new byte[0]));
            r.put("refused", false);
        } catch (MQClientException e) {
            r.put("refused", true);
            r.put("code", e.getResponseCode());
            r.put("error", ClientApp.oneLine(e));
        }
        return r;
    }

    /** QUERY_MESSAGE through the broker's index: the messages of {@code topic} with key {@code key}. */
    private JsonNode query(JsonNode req) throws Exception {
        QueryResult qr = producer(req).queryMessage(req.path("topic").asText(), req.path("key").asText(), 64, 0,
            Long.MAX_VALUE);
        ObjectNode r = ClientApp.ok();
        ArrayNode found = r.putArray("messages");
        for (MessageExt m : qr.getMessageList()) {
            found.add(Consumers.record(ClientApp.JSON.createObjectNode(), m));
        }
        return r;
    }

    /** VIEW_MESSAGE_BY_ID: the message an offset message id points at. */
    private JsonNode view(JsonNode req) throws Exception {
        MessageExt m = producer(req).viewMessage(req.path("offset_msg_id").asText());
        return Consumers.record(ClientApp.ok(), m);
    }

    /** GET_MIN_OFFSET / GET_MAX_OFFSET of each queue of {@code topic} on {@code broker}. */
    private JsonNode offsets(JsonNode req) throws Exception {
        DefaultMQProducer p = producer(req);
        ObjectNode r = ClientApp.ok();
        ArrayNode qs = r.putArray("queues");
        for (int q = 0; q < req.path("queues").asInt(4); q++) {
            MessageQueue mq = new MessageQueue(req.path("topic").asText(), req.path("broker").asText(), q);
            ObjectNode n = qs.addObject();
            n.put("queue", q);
            n.put("min", p.minOffset(mq));
            n.put("max", p.maxOffset(mq));
        }
        return r;
    }

    @Override
    public void closeAll() {
        for (Producing run : runs.values()) {
            run.halt();
        }
        consumers.closeAll();
        for (DefaultMQProducer p : producers.values()) {
            p.shutdown();
        }
    }

    static List<String> texts(JsonNode arr) {
        List<String> out = new ArrayList<>();
        arr.forEach(n -> out.add(n.asText()));
        return out.isEmpty() ? Arrays.asList() : out;
    }
}
