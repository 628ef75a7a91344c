package rocketlab.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.openmessaging.storage.dledger.DLedgerConfig;
import io.openmessaging.storage.dledger.MemberState;
import io.openmessaging.storage.dledger.entry.DLedgerEntry;
import io.openmessaging.storage.dledger.store.file.DLedgerMmapFileStore;
import java.util.Base64;

/** DLedger 0.3.1.2's {@code DLedgerMmapFileStore} and {@code MemberState}, driven as a member's code
 * drives them: recover on startup, terms through candidate -> nextTerm -> vote -> leader, appends as
 * leader, the committed index, a checkpoint on shutdown. */
final class DLedgerCommands {
    private DLedgerMmapFileStore store;
    private MemberState memberState;

    JsonNode run(String cmd, JsonNode req) throws Exception {
        switch (cmd) {
            case "dledgerOpen":
                return open(req);
            case "dledgerAppend":
                return append(req);
            case "dledgerCommit":
                store().updateCommittedIndex(memberState.currTerm(), req.get("index").asLong());
                return state();
            case "dledgerRead":
                return read();
            case "dledgerState":
                return state();
            case "dledgerClose":
                closeAll();
                return Main.ok();
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    void closeAll() {
        if (store != null) {
            store.shutdown();
            store = null;
            memberState = null;
        }
    }

    private DLedgerMmapFileStore store() {
        if (store == null) {
            throw new IllegalStateException("no DLedger store is open");
        }
        return store;
    }

    private JsonNode open(JsonNode req) throws Exception {
        if (store != null) {
            throw new IllegalStateException("a DLedger store is already open");
        }
        DLedgerConfig config = new DLedgerConfig();
        config.setEnableLeaderElector(false);
        Commands.configure(config, req.get("config"));
        memberState = new MemberState(config);  // loads currterm
        DLedgerMmapFileStore s = new DLedgerMmapFileStore(config, memberState);
        s.setEnableCleanSpaceService(false);
        s.startup();  // load + recover
        store = s;
        return state();
    }

    /** Appends {@code bodies} as leader of {@code term}, reaching the term the way an elector does. */
    private JsonNode append(JsonNode req) {
        long term = req.get("term").asLong();
        while (memberState.currTerm() < term) {
            memberState.changeToCandidate(memberState.currTerm());
            memberState.nextTerm();
        }
        if (memberState.currTerm() != term) {
            throw new IllegalStateException("member is at term " + memberState.currTerm() + ", beyond " + term);
        }
        if (!memberState.getSelfId().equals(memberState.currVoteFor())) {
            memberState.setCurrVoteFor(memberState.getSelfId());
        }
        memberState.changeToLeader(term);
        ObjectNode reply = Main.ok();
        ArrayNode out = reply.putArray("entries");
        for (JsonNode b : req.get("bodies")) {
            DLedgerEntry entry = new DLedgerEntry();
            entry.setBody(Base64.getDecoder().decode(b.asText()));
            DLedgerEntry written = store().appendAsLeader(entry);
            out.add(entry(written, false));
        }
        return reply;
    }

    private ObjectNode state() {
        ObjectNode reply = Main.ok();
        DLedgerMmapFileStore s = store();
        reply.put("ledgerBeginIndex", s.getLedgerBeginIndex());
        reply.put("ledgerEndIndex", s.getLedgerEndIndex());
        reply.put("ledgerEndTerm", s.getLedgerEndTerm());
        reply.put("committedIndex", s.getCommittedIndex());
        reply.put("committedPos", s.getCommittedPos());
        reply.put("writePos", s.getWritePos());
        reply.put("currTerm", memberState.currTerm());
        if (memberState.currVoteFor() == null) {
            reply.putNull("currVoteFor");
        } else {
            reply.put("currVoteFor", memberState.currVoteFor());
        }
        return reply;
    }

    private JsonNode read() {
        ObjectNode reply = state();
        ArrayNode out = reply.putArray("entries");
        DLedgerMmapFileStore s = store();
        for (long i = s.getLedgerBeginIndex(); i >= 0 && i <= s.getLedgerEndIndex(); i++) {
            out.add(entry(s.get(i), true));
        }
        return reply;
    }

    private static ObjectNode entry(DLedgerEntry e, boolean withBody) {
        ObjectNode n = Main.JSON.createObjectNode();
        n.put("index", e.getIndex());
        n.put("term", e.getTerm());
        n.put("pos", e.getPos());
        n.put("size", e.getSize());
        n.put("magic", e.getMagic());
        n.put("channel", e.getChannel());
        n.put("chainCrc", e.getChainCrc());
        n.put("bodyCrc", e.getBodyCrc());
        if (withBody) {
            n.put("body", Base64.getEncoder().encodeToString(e.getBody() == null ? new byte[0] : e.getBody()));
        }
        return n;
    }
}
