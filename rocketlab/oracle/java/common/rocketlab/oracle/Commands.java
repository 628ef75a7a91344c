package rocketlab.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.store.AppendMessageResult;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.GetMessageResult;
import org.apache.rocketmq.store.PutMessageResult;
import org.apache.rocketmq.store.QueryMessageResult;
import org.apache.rocketmq.store.SelectMappedBufferResult;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import rocketlab.oracle.lines.JsonLines;

/** The commands of {@link Main}: a {@code DefaultMessageStore} (CommitLog, ConsumeQueue, IndexService,
 * recovery, HA) and a DLedger store ({@link DLedgerCommands}), each used through its public API only. */
final class Commands implements JsonLines.Commands {
    static final int BLANK_MAGIC_CODE = -875286124;

    boolean exitRequested;
    private DefaultMessageStore store;
    private InetSocketAddress storeHost;
    private final DLedgerCommands dledger = new DLedgerCommands();
    private final DLedgerClientCommands dledgerClient = new DLedgerClientCommands();
    private final RemotingCommands remoting = new RemotingCommands();

    @Override
    public JsonNode run(String cmd, JsonNode req) throws Exception {
        switch (cmd) {
            case "open":
                return open(req);
            case "put":
                return put(req.get("msg"));
            case "putMany":
                return putMany(req);
            case "putRepeat":
                return putRepeat(req);
            case "putBatch":
                return result(store().putMessages(Messages.batch(req.get("batch"), storeHost)));
            case "waitDispatch":
                return waitDispatch(req.path("timeoutMs").asLong(30000));
            case "readBack":
                return readBack(req.path("keys"));
            case "consume":
                return consume(req.path("batch").asInt(32));
            case "haInfo":
                return Compat.haInfo(store());
            case "offsets":
                return offsets();
            case "shutdown":
                return shutdown();
            case "decodeFiles":
                return Decoding.decodeFiles(req);
            case "exit":
                exitRequested = true;
                return Main.ok();
            default:
                if (cmd.startsWith("autoswitch") || cmd.startsWith("controller")) {  // RocketMQ 5.3.3 only
                    return Extensions.run(cmd.startsWith("autoswitch") ? "rocketlab.oracle.AutoSwitchCommands" : "rocketlab.oracle.ControllerCommands", cmd, req);
                }
                if (cmd.startsWith("dledgerClient")) {
                    return dledgerClient.run(cmd, req);
                }
                if (cmd.startsWith("dledger")) {
                    return dledger.run(cmd, req);
                }
                if (cmd.startsWith("remoting")) {
                    return remoting.run(cmd, req);
                }
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    @Override
    public boolean exitRequested() {
        return exitRequested;
    }

    @Override
    public void closeAll() {
        if (store != null) {
            store.shutdown();
            store = null;
        }
        dledger.closeAll();
        dledgerClient.closeAll();
        remoting.closeAll();
    }

    private DefaultMessageStore store() {
        if (store == null) {
            throw new IllegalStateException("no store is open");
        }
        return store;
    }

    // ------------------------------------------------------------------------------------ open ----

    /** Applies {@code name: value} pairs to a config object through its setters (MessageStoreConfig and
     * DLedgerConfig use Java bean names: mappedFileSizeCommitLog, brokerRole, ...). */
    static void configure(Object config, JsonNode values) throws Exception {
        for (Map.Entry<String, JsonNode> e : iterable(values)) {
            // setMappedFileSizeCommitLog, and setdLegerGroup (RocketMQ's own spelling of some setters)
            String setter = "set" + Character.toUpperCase(e.getKey().charAt(0)) + e.getKey().substring(1);
            String literal = "set" + e.getKey();
            Method found = null;
            for (Method m : config.getClass().getMethods()) {
                if ((m.getName().equals(setter) || m.getName().equals(literal)) && m.getParameterCount() == 1) {
                    found = m;
                    break;
                }
            }
            if (found == null) {
                throw new IllegalArgumentException(config.getClass().getSimpleName() + " has no setting " + e.getKey());
            }
            Class<?> type = found.getParameterTypes()[0];
            JsonNode v = e.getValue();
            Object arg;
            if (type == int.class || type == Integer.class) {
                arg = v.asInt();
            } else if (type == long.class || type == Long.class) {
                arg = v.asLong();
            } else if (type == boolean.class || type == Boolean.class) {
                arg = v.asBoolean();
            } else if (type == double.class || type == Double.class) {
                arg = v.asDouble();
            } else if (type == String.class) {
                arg = v.asText();
            } else if (type.isEnum()) {
                arg = enumValue(type, v.asText());
            } else {
                throw new IllegalArgumentException("setting " + e.getKey() + " has an unsupported type " + type);
            }
            found.invoke(config, arg);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object enumValue(Class<?> type, String name) {
        return Enum.valueOf((Class<? extends Enum>) type, name);
    }

    static Iterable<Map.Entry<String, JsonNode>> iterable(JsonNode node) {
        List<Map.Entry<String, JsonNode>> out = new ArrayList<>();
        if (node != null) {
            node.fields().forEachRemaining(out::add);
        }
        return out;
    }

    private JsonNode open(JsonNode req) throws Exception {
        if (store != null) {
            throw new IllegalStateException("a store is already open");
        }
        MessageStoreConfig config = new MessageStoreConfig();
        config.setStorePathRootDir(req.get("root").asText());
        config.setStorePathCommitLog(req.get("root").asText() + File.separator + "commitlog");
        configure(config, req.get("config"));
        storeHost = host(req.path("storeHost").asText("127.0.0.1:10911"));
        DefaultMessageStore s = Compat.newStore(config);
        boolean abnormal = new File(req.get("root").asText(), "abort").exists();
        if (!s.load()) {
            s.shutdown();
            throw new IllegalStateException("DefaultMessageStore.load() returned false");
        }
        String master = req.path("haMasterAddress").asText("");
        if (!master.isEmpty()) {
            s.updateHaMasterAddress(master);  // before start, as BrokerController does: HAClient dials at once
        }
        s.start();
        store = s;
        ObjectNode reply = offsets();
        reply.put("lastExitOK", !abnormal);
        return reply;
    }

    private ObjectNode offsets() {
        ObjectNode reply = Main.ok();
        reply.put("minPhyOffset", store().getMinPhyOffset());
        reply.put("maxPhyOffset", store().getMaxPhyOffset());
        reply.put("confirmOffset", store().getConfirmOffset());
        reply.put("dispatchBehindBytes", store().dispatchBehindBytes());
        return reply;
    }

    private JsonNode shutdown() {
        if (store != null) {
            store.shutdown();
            store = null;
        }
        return Main.ok();
    }

    // ------------------------------------------------------------------------------------- put ----

    static InetSocketAddress host(String text) throws Exception {
        int colon = text.lastIndexOf(':');
        String ip = text.substring(0, colon);
        if (ip.startsWith("[")) {
            ip = ip.substring(1, ip.length() - 1);
        }
        return new InetSocketAddress(InetAddress.getByName(ip), Integer.parseInt(text.substring(colon + 1)));
    }

    static Map<String, String> properties(JsonNode pairs) {
        Map<String, String> props = new LinkedHashMap<>();  // the producer's order
        if (pairs != null) {
            for (JsonNode pair : pairs) {
                props.put(pair.get(0).asText(), pair.get(1).asText());
            }
        }
        return props;
    }

    static byte[] body(JsonNode spec) {
        return Base64.getDecoder().decode(spec.path("body").asText(""));
    }

    private JsonNode put(JsonNode msg) throws Exception {
        return result(Compat.putInner(store(), Messages.build(msg, storeHost)));
    }

    private JsonNode putMany(JsonNode req) throws Exception {
        ObjectNode reply = Main.ok();
        ArrayNode results = reply.putArray("results");
        boolean progress = req.path("progress").asBoolean(false);
        for (JsonNode msg : req.get("msgs")) {
            ObjectNode r = result(Compat.putInner(store(), Messages.build(msg, storeHost)));
            if (progress) {
                ObjectNode event = Main.JSON.createObjectNode();
                event.put("event", "put");
                event.set("result", r);
                Main.emit(event);
            } else {
                results.add(r);
            }
        }
        return reply;
    }

    /** Puts {@code count} messages, cycling through {@code msgs}, timed inside the JVM (a benchmark: no
     * JSON per put). Each put is a message built beforehand, as a broker hands the store a new one. */
    private JsonNode putRepeat(JsonNode req) throws Exception {
        int count = req.get("count").asInt();
        List<JsonNode> specs = new ArrayList<>();
        req.get("msgs").forEach(specs::add);
        List<MessageExt> built = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            built.add(Messages.build(specs.get(i % specs.size()), storeHost));
        }
        long ok = 0;
        long begin = System.nanoTime();
        for (MessageExt m : built) {
            if (Compat.putInner(store(), m).getPutMessageStatus().name().equals("PUT_OK")) {
                ok++;
            }
        }
        long elapsed = System.nanoTime() - begin;
        ObjectNode reply = offsets();
        reply.put("putOk", ok);
        reply.put("nanos", elapsed);
        return reply;
    }

    static ObjectNode result(PutMessageResult r) {
        ObjectNode out = Main.ok();
        out.put("status", r.getPutMessageStatus().name());
        AppendMessageResult a = r.getAppendMessageResult();
        if (a != null) {
            out.put("appendStatus", a.getStatus().name());
            out.put("wroteOffset", a.getWroteOffset());
            out.put("wroteBytes", a.getWroteBytes());
            out.put("msgId", a.getMsgId());
            out.put("queueOffset", a.getLogicsOffset());
            out.put("storeTimestamp", a.getStoreTimestamp());
            out.put("msgNum", a.getMsgNum());
        }
        return out;
    }

    private JsonNode waitDispatch(long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (store().dispatchBehindBytes() > 0) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("reput still " + store().dispatchBehindBytes() + " bytes behind");
            }
            Thread.sleep(5);
        }
        return offsets();
    }

    // -------------------------------------------------------------------------------- read back ----

    /** Everything a reader of the store sees, through the store's own API: each record of the CommitLog
     * from the min to the max phy offset (and each END_OF_FILE blank), each ConsumeQueue's units between
     * its min and max offset, and what {@code queryMessage} finds for each key. */
    private JsonNode readBack(JsonNode keys) throws Exception {
        DefaultMessageStore s = store();
        ObjectNode reply = offsets();
        ArrayNode records = reply.putArray("records");
        ArrayNode blanks = reply.putArray("blanks");
        long offset = s.getMinPhyOffset();
        long max = s.getMaxPhyOffset();
        while (offset < max) {
            SelectMappedBufferResult data = s.getCommitLogData(offset);
            if (data == null) {
                throw new IllegalStateException("no CommitLog data at " + offset);
            }
            try {
                ByteBuffer bb = data.getByteBuffer();
                int pos = 0;
                int limit = data.getSize();
                boolean nextFile = false;
                while (pos + 8 <= limit && offset + pos < max) {
                    int size = bb.getInt(pos);
                    int magic = bb.getInt(pos + 4);
                    if (magic == BLANK_MAGIC_CODE) {
                        ObjectNode b = blanks.addObject();
                        b.put("phyOffset", offset + pos);
                        b.put("size", size);
                        pos += size;
                        nextFile = true;
                        break;
                    }
                    ByteBuffer one = bb.duplicate();
                    one.position(pos);
                    one.limit(pos + size);
                    MessageExt m = MessageDecoder.decode(one.slice(), true, false);
                    if (m == null) {
                        throw new IllegalStateException("MessageDecoder.decode failed at " + (offset + pos));
                    }
                    records.add(record(m));
                    pos += size;
                }
                if (pos == 0 && !nextFile) {
                    throw new IllegalStateException("no record decodable at " + offset);
                }
                offset += pos;
            } finally {
                data.release();
            }
        }
        ObjectNode queues = reply.putObject("queues");
        for (Map.Entry<String, List<Integer>> e : queueTable(s).entrySet()) {
            for (int qid : e.getValue()) {
                ObjectNode q = queues.putObject(e.getKey() + "/" + qid);
                long min = s.getMinOffsetInQueue(e.getKey(), qid);
                long maxq = s.getMaxOffsetInQueue(e.getKey(), qid);
                q.put("min", min);
                q.put("max", maxq);
                ArrayNode units = q.putArray("units");
                for (long[] u : Compat.units(s, e.getKey(), qid, min, maxq)) {
                    ArrayNode row = units.addArray();
                    for (long v : u) {
                        row.add(v);
                    }
                }
            }
        }
        ObjectNode found = reply.putObject("keys");
        if (keys != null) {
            for (JsonNode k : keys) {
                String topic = k.get(0).asText();
                String key = k.get(1).asText();
                QueryMessageResult q = s.queryMessage(topic, key, 64, 0, Long.MAX_VALUE);
                List<Long> offsets = new ArrayList<>();
                for (ByteBuffer buf : q.getMessageBufferList()) {
                    offsets.add(buf.getLong(buf.position() + 28));
                }
                q.release();
                Collections.sort(offsets);
                ArrayNode list = found.putArray(topic + "#" + key);
                offsets.forEach(list::add);
            }
        }
        return reply;
    }

    /** The store's ConsumeQueues: topic -> queue ids, both sorted. */
    private static Map<String, List<Integer>> queueTable(DefaultMessageStore s) {
        Map<String, List<Integer>> table = new TreeMap<>();
        for (Map.Entry<String, ? extends Map<Integer, ?>> e : s.getConsumeQueueTable().entrySet()) {
            List<Integer> ids = new ArrayList<>(e.getValue().keySet());
            Collections.sort(ids);
            table.put(e.getKey(), ids);
        }
        return table;
    }

    /** What a consumer gets: every non-empty ConsumeQueue read with {@code getMessage} from its min
     * offset until nothing more is found, each message decoded; the status that ended each queue. */
    private JsonNode consume(int batch) throws Exception {
        DefaultMessageStore s = store();
        ObjectNode reply = offsets();
        ObjectNode queues = reply.putObject("queues");
        for (Map.Entry<String, List<Integer>> e : queueTable(s).entrySet()) {
            for (int qid : e.getValue()) {
                long offset = s.getMinOffsetInQueue(e.getKey(), qid);
                long max = s.getMaxOffsetInQueue(e.getKey(), qid);
                if (max <= 0) {
                    continue;
                }
                ObjectNode q = queues.putObject(e.getKey() + "/" + qid);
                q.put("min", offset);
                q.put("max", max);
                ArrayNode messages = q.putArray("messages");
                String status = "";
                while (offset < max) {
                    GetMessageResult r = s.getMessage("rocketlab", e.getKey(), qid, offset, batch, null);
                    if (r == null) {
                        status = "null";
                        break;
                    }
                    try {
                        status = r.getStatus().name();
                        for (ByteBuffer buf : r.getMessageBufferList()) {
                            MessageExt m = MessageDecoder.decode(buf.slice(), true, false);
                            messages.add(record(m));
                        }
                        if (r.getMessageBufferList().isEmpty() || r.getNextBeginOffset() <= offset) {
                            break;
                        }
                        offset = r.getNextBeginOffset();
                    } finally {
                        r.release();
                    }
                }
                q.put("status", status);
            }
        }
        return reply;
    }

    static ObjectNode record(MessageExt m) {
        ObjectNode r = Main.JSON.createObjectNode();
        r.put("phyOffset", m.getCommitLogOffset());
        r.put("size", m.getStoreSize());
        r.put("topic", m.getTopic());
        r.put("queueId", m.getQueueId());
        r.put("queueOffset", m.getQueueOffset());
        r.put("msgId", m.getMsgId());
        r.put("bodyCrc", m.getBodyCRC());
        r.put("flag", m.getFlag());
        r.put("sysFlag", m.getSysFlag());
        r.put("bornTimestamp", m.getBornTimestamp());
        r.put("storeTimestamp", m.getStoreTimestamp());
        r.put("bornHost", hostText((InetSocketAddress) m.getBornHost()));
        r.put("storeHost", hostText((InetSocketAddress) m.getStoreHost()));
        r.put("reconsumeTimes", m.getReconsumeTimes());
        r.put("preparedTransactionOffset", m.getPreparedTransactionOffset());
        ObjectNode props = r.putObject("properties");
        if (m.getProperties() != null) {
            new TreeMap<>(m.getProperties()).forEach(props::put);
        }
        r.put("body", Base64.getEncoder().encodeToString(m.getBody() == null ? new byte[0] : m.getBody()));
        return r;
    }

    static String hostText(InetSocketAddress a) {
        String ip = a.getAddress().getHostAddress();
        return (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + a.getPort();
    }
}
