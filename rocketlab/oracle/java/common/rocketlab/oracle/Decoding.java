package rocketlab.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Arrays;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;

/** {@code MessageDecoder.decode} over CommitLog files, timed inside the JVM: the baseline the Spark
 * readers are measured against. */
final class Decoding {
    private Decoding() {
    }

    static JsonNode decodeFiles(JsonNode req) throws Exception {
        File dir = new File(req.get("dir").asText());
        boolean readBody = req.path("readBody").asBoolean(true);
        int rounds = req.path("rounds").asInt(1);
        File[] files = dir.listFiles(File::isFile);
        if (files == null || files.length == 0) {
            throw new IllegalArgumentException(dir + ": no CommitLog files");
        }
        Arrays.sort(files);
        long records = 0;
        long bytes = 0;
        long checksum = 0;
        long best = Long.MAX_VALUE;
        for (int round = 0; round < rounds; round++) {
            long begin = System.nanoTime();
            records = 0;
            bytes = 0;
            checksum = 0;
            for (File f : files) {
                try (RandomAccessFile raf = new RandomAccessFile(f, "r"); FileChannel ch = raf.getChannel()) {
                    MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
                    int pos = 0;
                    int limit = (int) ch.size();
                    while (pos + 8 <= limit) {
                        int size = map.getInt(pos);
                        int magic = map.getInt(pos + 4);
                        if (size <= 0 || magic == Commands.BLANK_MAGIC_CODE) {
                            break;
                        }
                        ByteBuffer one = map.duplicate();
                        one.position(pos);
                        one.limit(pos + size);
                        MessageExt m = MessageDecoder.decode(one.slice(), readBody, false);
                        checksum += m.getQueueOffset() + m.getTopic().length();
                        records++;
                        bytes += size;
                        pos += size;
                    }
                }
            }
            best = Math.min(best, System.nanoTime() - begin);
        }
        ObjectNode reply = Main.ok();
        reply.put("records", records);
        reply.put("bytes", bytes);
        reply.put("checksum", checksum);
        reply.put("bestNanos", best);
        return reply;
    }
}
