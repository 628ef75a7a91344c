package rocketlab.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.openmessaging.storage.dledger.client.DLedgerClient;
import io.openmessaging.storage.dledger.entry.DLedgerEntry;
import io.openmessaging.storage.dledger.protocol.AppendEntryResponse;
import io.openmessaging.storage.dledger.protocol.GetEntriesResponse;
import java.util.Base64;

/** DLedger 0.3.1.2's own {@code DLedgerClient} (metadata from the members, appends to the leader, a
 * retry after NOT_LEADER), one per {@code group}/{@code peers}. */
final class DLedgerClientCommands {
    private DLedgerClient client;
    private String key;

    JsonNode run(String cmd, JsonNode req) throws Exception {
        switch (cmd) {
            case "dledgerClientAppend":
                return append(req);
            case "dledgerClientGet":
                return get(req);
            case "dledgerClientClose":
                closeAll();
                return Main.ok();
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    void closeAll() {
        if (client != null) {
            client.shutdown();
            client = null;
        }
    }

    private DLedgerClient client(JsonNode req) {
        String k = req.get("group").asText() + "/" + req.get("peers").asText();
        if (client == null || !k.equals(key)) {
            closeAll();
            client = new DLedgerClient(req.get("group").asText(), req.get("peers").asText());
            client.startup();
            key = k;
        }
        return client;
    }

    /** {@code append(body)} for each body in turn; each answer's code, index, pos and leader. */
    private JsonNode append(JsonNode req) {
        DLedgerClient c = client(req);
        ObjectNode reply = Main.ok();
        ArrayNode out = reply.putArray("responses");
        for (JsonNode b : req.get("bodies")) {
            AppendEntryResponse r = c.append(Base64.getDecoder().decode(b.asText()));
            ObjectNode n = out.addObject();
            n.put("code", r.getCode());
            n.put("index", r.getIndex());
            n.put("pos", r.getPos());
            n.put("term", r.getTerm());
            if (r.getLeaderId() != null) {
                n.put("leaderId", r.getLeaderId());
            }
        }
        return reply;
    }

    private JsonNode get(JsonNode req) {
        GetEntriesResponse r = client(req).get(req.get("index").asLong());
        ObjectNode reply = Main.ok();
        reply.put("code", r.getCode());
        ArrayNode out = reply.putArray("entries");
        if (r.getEntries() != null) {
            for (DLedgerEntry e : r.getEntries()) {
                ObjectNode n = out.addObject();
                n.put("index", e.getIndex());
                n.put("term", e.getTerm());
                n.put("body", Base64.getEncoder().encodeToString(e.getBody() == null ? new byte[0] : e.getBody()));
            }
        }
        return reply;
    }
}
