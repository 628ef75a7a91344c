package rocketlab.oracle;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.openmessaging.storage.dledger.DLedgerConfig;
import io.openmessaging.storage.dledger.DLedgerLeaderElector;
import io.openmessaging.storage.dledger.DLedgerServer;
import io.openmessaging.storage.dledger.MemberState;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * One real DLedger 0.3.1.2 member ({@code DLedgerServer}: elector, pusher, mmap file store, remoting on
 * Netty) as a process of its own, configured by the same properties file as a rocketlab member
 * ({@code rocketlab node --config FILE} with {@code nodeKind=java-dledger} runs this class).
 *
 * <p>Keys: every {@code DLedgerConfig} setter by its Java name (group, selfId, peers, storeBaseDir,
 * heartBeatTimeIntervalMs, ...); the runtime keys {@code nodeKind}, {@code runDir}, {@code seed},
 * {@code traceNetwork}, {@code profile} are read or ignored. A key that is neither is an error (exit 2).
 * Prints one JSON line when it listens ({@code {"node", "listening", "implementation": "java"}}),
 * appends its role changes to {@code runDir/events-<selfId>.jsonl} as rocketlab's trace does, and on
 * SIGTERM shuts the server down (flush, checkpoint), writes {@code runDir/final-<selfId>.json} and
 * exits 0.
 */
public final class DLedgerMember {
    private static final Set<String> RUNTIME_KEYS = Set.of("nodeKind", "runDir", "seed", "traceNetwork", "profile", "javaRelease",
        "implementation");
    private static final Object LOCK = new Object();
    private static long seq;
    private static Writer events;
    private static String selfId;

    private DLedgerMember() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        if (args.length != 1) {
            System.err.println("rocketlab: usage: DLedgerMember CONFIG");
            Runtime.getRuntime().halt(2);
        }
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        DLedgerConfig config = new DLedgerConfig();
        for (String key : props.stringPropertyNames()) {
            if (RUNTIME_KEYS.contains(key)) {
                continue;
            }
            if (!set(config, key, props.getProperty(key).trim())) {
                System.err.println("rocketlab: " + key + ": not a DLedgerConfig setting of DLedger 0.3.1.2");
                Runtime.getRuntime().halt(2);
            }
        }
        selfId = config.getSelfId();
        File runDir = new File(props.getProperty("runDir", "runs/node-" + selfId));
        if (!props.containsKey("storeBaseDir")) {
            config.setStoreBaseDir(new File(new File(runDir, "nodes"), selfId).getPath());
        }
        runDir.mkdirs();
        events = new OutputStreamWriter(new FileOutputStream(new File(runDir, "events-" + selfId + ".jsonl"), true),
            StandardCharsets.UTF_8);
        DLedgerServer server = new DLedgerServer(config);
        server.getdLedgerLeaderElector().addRoleChangeHandler(new DLedgerLeaderElector.RoleChangeHandler() {
            @Override
            public void handle(long term, MemberState.Role role) {
                MemberState ms = server.getMemberState();
                ObjectNode e = event("role");
                e.put("term", term);
                e.put("role", role.name());
                if (ms.getLeaderId() == null) {
                    e.putNull("leader");
                } else {
                    e.put("leader", ms.getLeaderId());
                }
                write(e);
            }

            @Override
            public void startup() {
            }

            @Override
            public void shutdown() {
            }
        });
        server.startup();
        CountDownLatch stop = new CountDownLatch(1);
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), s -> stop.countDown());
        sun.misc.Signal.handle(new sun.misc.Signal("INT"), s -> stop.countDown());
        ObjectNode hello = Main.JSON.createObjectNode();
        hello.put("node", selfId);
        hello.put("listening", config.getSelfAddress());
        hello.put("implementation", "java");
        hello.put("dledger", "0.3.1.2");
        out.println(hello.toString());
        stop.await();
        MemberState ms = server.getMemberState();
        ObjectNode fin = Main.JSON.createObjectNode();
        server.shutdown();
        fin.put("role", ms.getRole().name());
        fin.put("term", ms.currTerm());
        fin.put("leader_id", ms.getLeaderId());
        fin.put("ledger_end_index", server.getdLedgerStore().getLedgerEndIndex());
        fin.put("ledger_end_term", server.getdLedgerStore().getLedgerEndTerm());
        fin.put("committed_index", server.getdLedgerStore().getCommittedIndex());
        fin.put("implementation", "java");
        fin.put("group", config.getGroup());
        Files.writeString(new File(runDir, "final-" + selfId + ".json").toPath(),
            Main.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(fin) + "\n");
        synchronized (LOCK) {
            events.close();
        }
        System.err.println("{\"stopped\": \"" + selfId + "\"}");
        Runtime.getRuntime().halt(0);
    }

    static ObjectNode event(String kind) {
        ObjectNode e = Main.JSON.createObjectNode();
        e.put("t", System.nanoTime() / 1_000_000);
        e.put("wall_ms", System.currentTimeMillis());
        e.put("node", selfId);
        e.put("kind", kind);
        return e;
    }

    static void write(ObjectNode e) {
        synchronized (LOCK) {
            try {
                e.put("seq", seq++);
                events.write(e.toString() + "\n");
                events.flush();
            } catch (Exception ignored) {
                // a trace line lost must not stop the member
            }
        }
    }

    /** {@code config.setKey(value)} through the setter of that name; false when there is none. */
    static boolean set(Object config, String key, String value) throws Exception {
        String setter = "set" + Character.toUpperCase(key.charAt(0)) + key.substring(1);
        for (Method m : config.getClass().getMethods()) {
            if (!m.getName().equals(setter) || m.getParameterCount() != 1) {
                continue;
            }
            Class<?> t = m.getParameterTypes()[0];
            Object arg;
            if (t == int.class || t == Integer.class) {
                arg = Integer.parseInt(value);
            } else if (t == long.class || t == Long.class) {
                arg = Long.parseLong(value);
            } else if (t == boolean.class || t == Boolean.class) {
                arg = Boolean.parseBoolean(value);
            } else if (t == float.class || t == Float.class) {
                arg = Float.parseFloat(value);
            } else if (t == double.class || t == Double.class) {
                arg = Double.parseDouble(value);
            } else if (t == String.class) {
                arg = value;
            } else {
                continue;
            }
            m.invoke(config, arg);
            return true;
        }
        return false;
    }
}
