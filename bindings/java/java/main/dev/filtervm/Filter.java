package dev.filtervm;

import java.lang.ref.Cleaner;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A compiled filter: immutable, thread-safe (match from any number of threads at once).
 *
 * <p>Native memory is released by {@link #close()}; a filter never closed is released by a
 * {@link java.lang.ref.Cleaner} once unreachable. A filter added to a {@link SubscriptionSet} may
 * be closed: the set keeps its own.
 *
 * <pre>{@code
 * try (Filter f = Filter.compile("sns", "{\"event\": [\"order.paid\"]}", null)) {
 *     f.matches(Message.builder().attribute("event", "order.paid").build()); // true
 * }
 * }</pre>
 */
public final class Filter implements AutoCloseable {
    final Handle handle;
    /** Runs {@code handle.close()} once: from {@link #close()}, or when the filter is unreachable. */
    private final Cleaner.Cleanable cleanable;

    private Filter(long address) {
        this.handle = new Handle(address, Native::freeFilter, "filter");
        cleanable = Handle.CLEANER.register(this, handle);
    }

    /**
     * Compiles {@code policy} of {@code dialect} ({@code sns}, {@code basaltic}, {@code eventgrid},
     * {@code stream}, {@code expr}, ...; see {@link #dialects()}).
     *
     * @param policy the policy as JSON text (for {@code stream} also the text form)
     * @param optionsJson the dialect's options as JSON text ({@code {"scope": "MessageBody"}}),
     *     or null for the defaults
     * @throws PolicyException with every error of the policy or options
     * @throws FiltervmException ({@code INVALID_ARGUMENT}) for an unknown dialect
     */
    public static Filter compile(String dialect, String policy, String optionsJson) {
        byte[] options = optionsJson == null ? null : optionsJson.getBytes(StandardCharsets.UTF_8);
        return new Filter(Native.compile(
                dialect.getBytes(StandardCharsets.UTF_8), policy.getBytes(StandardCharsets.UTF_8), options));
    }

    /** Compiles {@code policy} with the dialect's default options. */
    public static Filter compile(String dialect, String policy) {
        return compile(dialect, policy, null);
    }

    /**
     * Loads {@link #toBytes()} output (any bytes may be given: the program is verified). A
     * loaded filter matches like the original but carries no policy ({@link #policy()} is null).
     *
     * @throws LoadException for bytes that are not a filter
     */
    public static Filter fromBytes(byte[] bytes) {
        return new Filter(Native.fromBytes(bytes));
    }

    /** The dialect names this library accepts. */
    public static List<String> dialects() {
        return List.of(Native.dialects());
    }

    /**
     * Whether the message matches: one JSON document as received (in the dialect's shape, an AWS
     * SNS notification, or any other document as the body itself).
     *
     * @throws MessageException when the message cannot be read or judged by this filter
     */
    public boolean matches(byte[] json) {
        return matches(json, ReadMode.VALIDATING);
    }

    /**
     * {@link #matches(byte[])}, reading the document in {@code mode}: {@link ReadMode#TRUSTED}
     * skips the members no filter reads by their structure alone, for input validated upstream.
     *
     * @throws MessageException when the message cannot be read or judged by this filter
     * @throws FiltervmException ({@code INVALID_ARGUMENT}) when {@code mode} is null
     */
    public boolean matches(byte[] json, ReadMode mode) {
        long h = handle.acquire();
        try {
            return Native.matches(h, json, false, ReadMode.codeOf(mode));
        } finally {
            handle.release();
        }
    }

    /** {@link #matches(byte[])} of the UTF-8 text. */
    public boolean matches(String json) {
        return matches(json.getBytes(StandardCharsets.UTF_8));
    }

    /** {@link #matches(byte[], ReadMode)} of the UTF-8 text. */
    public boolean matches(String json, ReadMode mode) {
        return matches(json.getBytes(StandardCharsets.UTF_8), mode);
    }

    /**
     * Whether the message given as its parts matches.
     *
     * @throws MessageException when the message cannot be read or judged by this filter
     */
    public boolean matches(Message message) {
        return matches(message, ReadMode.VALIDATING);
    }

    /**
     * {@link #matches(Message)}, reading a JSON body in {@code mode} (see {@link ReadMode}).
     *
     * @throws MessageException when the message cannot be read or judged by this filter
     * @throws FiltervmException ({@code INVALID_ARGUMENT}) when {@code mode} is null
     */
    public boolean matches(Message message, ReadMode mode) {
        long h = handle.acquire();
        try {
            return Native.matches(h, message.encoded, true, ReadMode.codeOf(mode));
        } finally {
            handle.release();
        }
    }

    /**
     * Why the message does or does not match, as JSON text (the shape {@code filtervm explain
     * --json} prints: {@code matched}, {@code verdict}, {@code decided_by}, {@code hints},
     * {@code conditions}, {@code instructions}).
     */
    public String explain(byte[] json) {
        long h = handle.acquire();
        try {
            return Native.explain(h, json, false);
        } finally {
            handle.release();
        }
    }

    /** {@link #explain(byte[])} for a message given as its parts. */
    public String explain(Message message) {
        long h = handle.acquire();
        try {
            return Native.explain(h, message.encoded, true);
        } finally {
            handle.release();
        }
    }

    /** The filter as bytes (program, dialect and options), for {@link #fromBytes(byte[])}. */
    public byte[] toBytes() {
        long h = handle.acquire();
        try {
            return Native.toBytes(h);
        } finally {
            handle.release();
        }
    }

    /** The dialect's name. */
    public String dialect() {
        return text(0);
    }

    /** The options as JSON text, every option written out. */
    public String optionsJson() {
        return text(1);
    }

    /** The policy text it was compiled from (null when loaded from bytes). */
    public String policy() {
        return text(2);
    }

    private String text(int what) {
        long h = handle.acquire();
        try {
            return Native.filterText(h, what);
        } finally {
            handle.release();
        }
    }

    /** Releases the native filter (idempotent; a call in flight on another thread finishes first). */
    @Override
    public void close() {
        cleanable.clean();
    }

    @Override
    public String toString() {
        if (handle.isClosed()) {
            return "Filter(closed)";
        }
        String p = policy();
        return "Filter(" + dialect() + " " + (p == null ? "(loaded)" : p) + ")";
    }
}
