package rocketlab.oracle;

import com.alibaba.fastjson.JSON;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Map;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingClient;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/** RocketMQ remoting as the release's own classes write and read it: a {@code RemotingCommand} with a
 * request header class (4.9.5 {@code org.apache.rocketmq.common.protocol.header.*}, 5.3.3
 * {@code org.apache.rocketmq.remoting.protocol.header.*}) encoded to a frame, a frame decoded with a
 * header class, a fastjson body through a class and back, and one request sent with the release's
 * {@code NettyRemotingClient}. Class names come from the caller. */
final class RemotingCommands {
    private NettyRemotingClient client;

    JsonNode run(String cmd, JsonNode req) throws Exception {
        switch (cmd) {
            case "remotingEncode":
                return encode(req);
            case "remotingDecode":
                return decode(req);
            case "remotingJson":
                return json(req);
            case "remotingInvoke":
                return invoke(req);
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

    /** The command of {@code req}: code, flag (1 response, 2 oneway), opaque, remark, a header of class
     * {@code headerClass} with {@code header}'s fields (set through the fields, as
     * {@code decodeCommandCustomHeader} does), extra {@code extFields}, and a body (base64). */
    private static RemotingCommand command(JsonNode req) throws Exception {
        int code = req.get("code").asInt();
        int flag = req.path("flag").asInt(0);
        CommandCustomHeader header = null;
        if (req.hasNonNull("headerClass")) {
            header = header(req.get("headerClass").asText(), req.get("header"));
        }
        RemotingCommand cmd;
        if ((flag & 1) == 1) {
            cmd = RemotingCommand.createResponseCommand(code, req.hasNonNull("remark") ? req.get("remark").asText() : null);
            if (header != null) {
                cmd.writeCustomHeader(header);
            }
        } else {
            cmd = RemotingCommand.createRequestCommand(code, header);
            if (req.hasNonNull("remark")) {
                cmd.setRemark(req.get("remark").asText());
            }
            if ((flag & 2) == 2) {
                cmd.markOnewayRPC();
            }
        }
        cmd.setOpaque(req.path("opaque").asInt(0));
        for (Map.Entry<String, JsonNode> e : Commands.iterable(req.get("extFields"))) {
            cmd.addExtField(e.getKey(), e.getValue().asText());
        }
        if (req.hasNonNull("body")) {
            cmd.setBody(Base64.getDecoder().decode(req.get("body").asText()));
        } else if (req.hasNonNull("bodyJson")) {  // what the release's fastjson makes of it, as a sender encodes it
            Object value = req.hasNonNull("bodyClass")
                ? JSON.parseObject(req.get("bodyJson").asText().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    Class.forName(req.get("bodyClass").asText()))
                : Main.JSON.readValue(req.get("bodyJson").asText(), Object.class);
            cmd.setBody(JSON.toJSONBytes(value));
        }
        return cmd;
    }

    static CommandCustomHeader header(String className, JsonNode values) throws Exception {
        Class<?> cls = Class.forName(className);
        CommandCustomHeader header = (CommandCustomHeader) cls.getDeclaredConstructor().newInstance();
        for (Map.Entry<String, JsonNode> e : Commands.iterable(values)) {
            Field f = field(cls, e.getKey());
            f.setAccessible(true);
            JsonNode v = e.getValue();
            Class<?> t = f.getType();
            Object value;
            if (v.isNull()) {
                value = null;
            } else if (t == int.class || t == Integer.class) {
                value = v.asInt();
            } else if (t == long.class || t == Long.class) {
                value = v.asLong();
            } else if (t == boolean.class || t == Boolean.class) {
                value = v.asBoolean();
            } else if (t == double.class || t == Double.class) {
                value = v.asDouble();
            } else if (t == String.class) {
                value = v.asText();
            } else if (t.isEnum()) {
                value = enumValue(t, v.asText());
            } else {
                throw new IllegalArgumentException(className + "." + e.getKey() + " has an unsupported type " + t);
            }
            f.set(header, value);
        }
        return header;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object enumValue(Class<?> type, String name) {
        return Enum.valueOf((Class<? extends Enum>) type, name);
    }

    private static Field field(Class<?> cls, String name) throws NoSuchFieldException {
        for (Class<?> c = cls; c != null && c != Object.class; c = c.getSuperclass()) {
            try {
                return c.getDeclaredField(name);
            } catch (NoSuchFieldException ignored) {
                // look in the superclass
            }
        }
        throw new NoSuchFieldException(cls.getName() + " has no field " + name);
    }

    private static byte[] frame(RemotingCommand cmd) {
        ByteBuffer buf = cmd.encode();
        byte[] out = new byte[buf.remaining()];
        buf.get(out);
        return out;
    }

    private JsonNode encode(JsonNode req) throws Exception {
        ObjectNode reply = Main.ok();
        reply.put("frame", Base64.getEncoder().encodeToString(frame(command(req))));
        return reply;
    }

    /** A frame (with its length field) decoded as NettyDecoder does, and its header read with
     * {@code headerClass} through {@code decodeCommandCustomHeader} (its fields by reflection). */
    private JsonNode decode(JsonNode req) throws Exception {
        byte[] frame = Base64.getDecoder().decode(req.get("frame").asText());
        RemotingCommand cmd = RemotingCommand.decode(ByteBuffer.wrap(frame, 4, frame.length - 4).slice());
        ObjectNode reply = describe(cmd);
        if (req.hasNonNull("headerClass")) {
            putHeader(reply, cmd, req.get("headerClass").asText(), true);
        }
        return reply;
    }

    private static ObjectNode describe(RemotingCommand cmd) {
        ObjectNode reply = Main.ok();
        reply.put("code", cmd.getCode());
        reply.put("flag", cmd.getFlag());
        reply.put("opaque", cmd.getOpaque());
        reply.put("language", cmd.getLanguage().name());
        reply.put("version", cmd.getVersion());
        reply.put("serializeType", cmd.getSerializeTypeCurrentRPC().name());
        reply.put("oneway", cmd.isOnewayRPC());
        reply.put("response", cmd.isResponseType());
        if (cmd.getRemark() != null) {
            reply.put("remark", cmd.getRemark());
        }
        if (cmd.getExtFields() != null) {
            ObjectNode ext = reply.putObject("extFields");
            for (Map.Entry<String, String> e : cmd.getExtFields().entrySet()) {
                ext.put(e.getKey(), e.getValue());
            }
        }
        if (cmd.getBody() != null) {
            reply.put("body", Base64.getEncoder().encodeToString(cmd.getBody()));
        }
        return reply;
    }

    /** {@code JSON.parseObject(json, class)} then {@code JSON.toJSONBytes}: what the release's fastjson
     * makes of a body (an error if it refuses it). */
    private JsonNode json(JsonNode req) throws Exception {
        Class<?> cls = Class.forName(req.get("class").asText());
        byte[] in = Base64.getDecoder().decode(req.get("json").asText());
        Object value = JSON.parseObject(in, cls);
        ObjectNode reply = Main.ok();
        reply.put("json", Base64.getEncoder().encodeToString(JSON.toJSONBytes(value)));
        return reply;
    }

    /** One request sent with the release's own {@code NettyRemotingClient} ({@code invokeSync}, or
     * {@code invokeOneway} when {@code oneway}); the response described. */
    private JsonNode invoke(JsonNode req) throws Exception {
        if (client == null) {
            client = new NettyRemotingClient(new NettyClientConfig());
            client.start();
        }
        RemotingCommand cmd = command(req);
        String addr = req.get("addr").asText();
        long timeout = req.path("timeoutMs").asLong(3000);
        if (req.path("oneway").asBoolean(false)) {
            client.invokeOneway(addr, cmd, timeout);
            return Main.ok();
        }
        RemotingCommand response = client.invokeSync(addr, cmd, timeout);
        ObjectNode reply = describe(response);
        if (req.hasNonNull("responseBodyClass") && response.getBody() != null) {  // as the caller decodes it
            Object body = JSON.parseObject(response.getBody(), Class.forName(req.get("responseBodyClass").asText()));
            reply.put("bodyJson", JSON.toJSONString(body));
        }
        if (req.hasNonNull("responseHeaderClass")) {
            putHeader(reply, response, req.get("responseHeaderClass").asText(), false);
        }
        return reply;
    }

    /** {@code cmd}'s header read with {@code headerClass} through {@code decodeCommandCustomHeader}, its
     * fields (by reflection, superclasses' too) as strings in {@code reply.header}; a null field as null
     * with {@code withNulls}, else left out. */
    private static void putHeader(ObjectNode reply, RemotingCommand cmd, String headerClass, boolean withNulls)
        throws Exception {
        Class<? extends CommandCustomHeader> cls = Class.forName(headerClass).asSubclass(CommandCustomHeader.class);
        CommandCustomHeader header = cmd.decodeCommandCustomHeader(cls);
        ObjectNode fields = reply.putObject("header");
        for (Class<?> c = cls; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers())) {
                    continue;
                }
                f.setAccessible(true);
                Object v = f.get(header);
                if (v != null) {
                    fields.put(f.getName(), v.toString());
                } else if (withNulls) {
                    fields.putNull(f.getName());
                }
            }
        }
    }
}
