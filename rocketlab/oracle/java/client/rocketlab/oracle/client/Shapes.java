package rocketlab.oracle.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.Random;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;

/**
 * Messages of mixed shape, the same for the same (seed, i): bodies of 1 B to 4 MiB (those of 4 KiB and more are
 * zlib-compressed by the producer, compressMsgBodyOverHowmuch), one or two keys, tags TagA/TagB/TagC or none,
 * user properties with non-ASCII values, non-ASCII bodies. {@code big} adds the 1 MiB and 4 MiB bodies.
 */
final class Shapes {
    static final String[] TAGS = {"TagA", "TagB", "TagC", null};
    static final int[] SIZES = {1, 17, 100, 1000, 1024, 4096, 4097, 16384, 300, 65536};

    private Shapes() {
    }

    static int size(long seed, int i, boolean big) {
        if (big && i == 7) {
            return 4 * 1024 * 1024;   // the producer's maxMessageSize: accepted (only > is refused), compressed
        }
        if (big && i == 13) {
            return 1024 * 1024;
        }
        return SIZES[(int) Math.floorMod(i * 7L + seed, SIZES.length)];
    }

    /** Bytes of length {@code n}: text with non-ASCII (compressible) for even i, random bytes for odd i. */
    static byte[] body(long seed, int i, int n) {
        byte[] b = new byte[n];
        if (i % 2 == 0 || n > 100000) {
            byte[] unit = ("rocketlab-" + i + "-größe-日本-").getBytes(StandardCharsets.UTF_8);
            for (int k = 0; k < n; k++) {
                b[k] = unit[k % unit.length];
            }
        } else {
            new Random(seed * 1000003L + i).nextBytes(b);
        }
        return b;
    }

    static Message message(String topic, long seed, int i, boolean big, String run) {
        int n = size(seed, i, big);
        String tag = TAGS[i % TAGS.length];
        String keys = i % 3 == 0 ? "k-" + run + "-" + i + MessageConst.KEY_SEPARATOR + "order-" + (i % 7) : "k-" + run + "-" + i;
        Message m = new Message(topic, tag, keys, body(seed, i, n));
        m.putUserProperty("i", Integer.toString(i));
        m.putUserProperty("run", run);
        if (i % 2 == 1) {
            m.putUserProperty("größe", "Größe-" + i + "-日本語");
        }
        return m;
    }

    static String sha(byte[] body) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(body);
            StringBuilder s = new StringBuilder();
            for (int k = 0; k < 12; k++) {
                s.append(String.format("%02x", d[k]));
            }
            return s.toString();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** What both sides report of a message: body length and digest, tags, keys, user properties. */
    static void describe(ObjectNode n, Message m) {
        n.put("size", m.getBody().length);
        n.put("sha", sha(m.getBody()));
        n.put("topic", m.getTopic());
        n.put("tags", m.getTags());
        n.put("keys", m.getKeys());
        ObjectNode props = n.putObject("props");
        for (Map.Entry<String, String> e : m.getProperties().entrySet()) {
            if (!MessageConst.STRING_HASH_SET.contains(e.getKey())) {
                props.put(e.getKey(), e.getValue());
            }
        }
    }
}
