package dev.filtervm;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * A message given as its parts — a body's bytes, typed attributes, headers — each optional.
 * Immutable and thread-safe; built by {@link #builder()}. Each filter reads the part its dialect
 * needs (attributes for {@code sns} and {@code basaltic}, the body for {@code sns} with
 * {@code {"scope": "MessageBody"}} and {@code eventgrid}, headers for {@code stream} and
 * {@code expr}); a message without it is a {@link MessageException} ({@code MESSAGE_SHAPE}) for
 * that filter, and in a set only that filter's group is left unjudged.
 *
 * <p>A message that is one JSON document (in the dialect's shape, or an AWS SNS notification)
 * is given to {@code matches(byte[])} instead.
 *
 * <pre>{@code
 * Message m = Message.builder()
 *     .attribute("event", "order.paid")       // String
 *     .attribute("amount", 42)                // Number
 *     .header("region", "eu-west")
 *     .body("{\"id\": 7}")
 *     .build();
 * }</pre>
 */
public final class Message {
    private static final byte BODY = 1;
    private static final byte ATTRIBUTES = 2;
    private static final byte HEADERS = 4;
    /** An attribute's type: its name follows (read by the native side's table of type names). */
    private static final byte TYPE_NAMED = 0;
    private static final byte TYPE_STRING = 1;
    private static final byte TYPE_NUMBER = 2;
    private static final byte TYPE_BINARY = 3;

    /** The parts, encoded once for the native side (see {@code bindings/java/src/message.rs}). */
    final byte[] encoded;

    private Message(byte[] encoded) {
        this.encoded = encoded;
    }

    /** A builder of a message with no part yet. */
    public static Builder builder() {
        return new Builder();
    }

    /** A message of a body only (an SNS body in {@code MessageBody} scope, an Event Grid event). */
    public static Message ofBody(byte[] body) {
        return builder().body(body).build();
    }

    /** Builds a {@link Message}; not thread-safe, reusable after {@link #build()}. */
    public static final class Builder {
        private byte[] body;
        private final Encoder attributes = new Encoder(256);
        private int attributeCount = -1;
        private final Encoder headers = new Encoder(0);
        private int headerCount = -1;

        private Builder() {}

        /** The body's bytes as published. */
        public Builder body(byte[] body) {
            this.body = body.clone();
            return this;
        }

        /** The body as text (UTF-8). */
        public Builder body(String body) {
            this.body = body.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        /** Gives the attributes part even when no attribute is added (an empty attribute set). */
        public Builder attributes() {
            if (attributeCount < 0) {
                attributeCount = 0;
            }
            return this;
        }

        /**
         * An attribute of type {@code type}: {@code String}, {@code Number}, {@code String.Array}
         * (the value is the JSON text of an array), {@code Binary}, or an SNS custom type
         * ({@code String.x}, {@code Number.x}, {@code Binary.x}). An unknown type name makes the
         * attributes unreadable for the filters that read them ({@code INVALID_MESSAGE}); the
         * others still judge the message. Of several attributes with one name, the last counts.
         */
        public Builder attribute(String name, String type, String value) {
            attributes();
            attributeCount++;
            attributes.string(name).u8(TYPE_NAMED).string(type).string(value);
            return this;
        }

        /** An attribute of a type this builder states itself (no type name to read). */
        private Builder typed(String name, byte type, String value) {
            attributes();
            attributeCount++;
            attributes.string(name).u8(type).string(value);
            return this;
        }

        /** A {@code String} attribute. */
        public Builder attribute(String name, String value) {
            return typed(name, TYPE_STRING, value);
        }

        /**
         * A {@code Number} attribute: its decimal text ({@link BigDecimal#toString()} for a
         * {@code BigDecimal}); a {@code double} or {@code float} must be finite.
         */
        public Builder attribute(String name, Number value) {
            if ((value instanceof Double && !Double.isFinite(value.doubleValue()))
                    || (value instanceof Float && !Float.isFinite(value.floatValue()))) {
                throw new IllegalArgumentException("attribute `" + name + "`: a Number is finite, not " + value);
            }
            return typed(name, TYPE_NUMBER, value.toString());
        }

        /** A {@code Binary} attribute (invisible to filters: SNS rule 8). */
        public Builder binaryAttribute(String name, byte[] value) {
            return typed(name, TYPE_BINARY, "");
        }

        /** Gives the headers part even when no header is added (a message without headers). */
        public Builder headers() {
            if (headerCount < 0) {
                headerCount = 0;
            }
            return this;
        }

        /**
         * A header with one value, or several ({@code expr} filters read every value;
         * {@code stream} filters refuse a header with several). A name given again is another
         * entry of the same header.
         */
        public Builder header(String name, String... values) {
            headers();
            headerCount++;
            headers.string(name).u32(values.length);
            for (String v : values) {
                headers.string(v);
            }
            return this;
        }

        /** A header with the values of a list. */
        public Builder header(String name, List<String> values) {
            return header(name, values.toArray(new String[0]));
        }

        /** The message. */
        public Message build() {
            int size = 1 + (body != null ? 4 + body.length : 0) + (attributeCount >= 0 ? 4 + attributes.len : 0)
                    + (headerCount >= 0 ? 4 + headers.len : 0);
            Encoder out = new Encoder(size);
            byte flags = 0;
            flags |= body != null ? BODY : 0;
            flags |= attributeCount >= 0 ? ATTRIBUTES : 0;
            flags |= headerCount >= 0 ? HEADERS : 0;
            if (flags == 0) {
                throw new IllegalStateException("a message has at least one part: body, attributes or headers");
            }
            out.u8(flags);
            if (body != null) {
                out.bytes(body);
            }
            if (attributeCount >= 0) {
                out.u32(attributeCount).raw(attributes);
            }
            if (headerCount >= 0) {
                out.u32(headerCount).raw(headers);
            }
            return new Message(out.len == out.buf.length ? out.buf : out.toArray());
        }
    }

    /** Little-endian lengths and UTF-8 strings into a growing array. */
    private static final class Encoder {
        private byte[] buf;
        private int len;

        Encoder(int capacity) {
            buf = new byte[capacity];
        }

        private void ensure(int more) {
            if (len + more > buf.length) {
                buf = Arrays.copyOf(buf, Math.max(Math.max(buf.length * 2, 64), len + more));
            }
        }

        Encoder u8(byte b) {
            ensure(1);
            buf[len++] = b;
            return this;
        }

        Encoder u32(int v) {
            ensure(4);
            buf[len++] = (byte) v;
            buf[len++] = (byte) (v >>> 8);
            buf[len++] = (byte) (v >>> 16);
            buf[len++] = (byte) (v >>> 24);
            return this;
        }

        Encoder bytes(byte[] b) {
            u32(b.length);
            ensure(b.length);
            System.arraycopy(b, 0, buf, len, b.length);
            len += b.length;
            return this;
        }

        /** The string's UTF-8 bytes (the JDK's encoder: a copy of its bytes for an ASCII string). */
        Encoder string(String s) {
            return bytes(s.getBytes(StandardCharsets.UTF_8));
        }

        Encoder raw(Encoder other) {
            ensure(other.len);
            System.arraycopy(other.buf, 0, buf, len, other.len);
            len += other.len;
            return this;
        }

        byte[] toArray() {
            return Arrays.copyOf(buf, len);
        }
    }
}
