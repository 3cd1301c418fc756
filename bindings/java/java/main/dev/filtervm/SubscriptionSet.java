package dev.filtervm;

import java.lang.ref.Cleaner;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Many subscriptions matched together: each an id of the caller's (any value with
 * {@code equals}/{@code hashCode}) and a {@link Filter} of any dialect and options.
 *
 * <p>Thread-safe: any number of threads match at once; {@link #add} and {@link #remove} wait for
 * the matches in progress on the native side. Native memory is released by {@link #close()}, or
 * by a {@link java.lang.ref.Cleaner} once the set is unreachable.
 *
 * @param <T> the id type
 */
public final class SubscriptionSet<T> implements AutoCloseable {
    private final Handle handle;
    /** Runs {@code handle.close()} once: from {@link #close()}, or when the set is unreachable. */
    private final Cleaner.Cleanable cleanable;
    /** Serializes add and remove (matching takes no Java lock). */
    private final Object writer = new Object();
    /** Id → its native key (a counter: the native set is keyed by numbers). */
    private final ConcurrentHashMap<T, Long> keys = new ConcurrentHashMap<>();
    /** Native key → id. */
    private final ConcurrentHashMap<Long, T> ids = new ConcurrentHashMap<>();
    private long nextKey;

    /** An empty set. */
    public SubscriptionSet() {
        handle = new Handle(Native.newSet(), Native::freeSet, "subscription set");
        cleanable = Handle.CLEANER.register(this, handle);
    }

    /**
     * Adds subscription {@code id} with {@code filter}, replacing its filter if {@code id} is
     * already there. The set keeps its own copy: {@code filter} may be closed afterwards.
     *
     * @throws LoadException for a filter loaded from bytes of the first wire format (no IR)
     * @throws FiltervmException ({@code SET_FULL}) when the set cannot take one more filter
     */
    public void add(T id, Filter filter) {
        if (id == null) {
            throw new NullPointerException("a subscription id is not null");
        }
        synchronized (writer) {
            Long known = keys.get(id);
            long key = known != null ? known : nextKey;
            long s = handle.acquire();
            try {
                long f = filter.handle.acquire();
                try {
                    Native.setAdd(s, key, f);
                } finally {
                    filter.handle.release();
                }
            } finally {
                handle.release();
            }
            if (known == null) {
                nextKey++;
                keys.put(id, key);
                ids.put(key, id);
            }
        }
    }

    /** Removes subscription {@code id}; false when it was not in the set. */
    public boolean remove(T id) {
        synchronized (writer) {
            Long key = keys.remove(id);
            if (key == null) {
                return false;
            }
            ids.remove(key);
            long s = handle.acquire();
            try {
                Native.setRemove(s, key);
            } finally {
                handle.release();
            }
            return true;
        }
    }

    /** The number of subscriptions. */
    public int size() {
        return keys.size();
    }

    /** Whether subscription {@code id} is in the set. */
    public boolean contains(T id) {
        return keys.containsKey(id);
    }

    /**
     * The subscriptions that match a message given as one JSON document, and the groups that
     * could not judge it.
     */
    public Matches<T> matching(byte[] json) {
        return matching(json, ReadMode.VALIDATING);
    }

    /**
     * {@link #matching(byte[])}, reading the document in {@code mode}: {@link ReadMode#TRUSTED}
     * skips the members no filter reads by their structure alone, for input validated upstream.
     *
     * @throws FiltervmException ({@code INVALID_ARGUMENT}) when {@code mode} is null
     */
    public Matches<T> matching(byte[] json, ReadMode mode) {
        return result(match(json, false, mode, false));
    }

    /** {@link #matching(byte[])} of the UTF-8 text. */
    public Matches<T> matching(String json) {
        return matching(json.getBytes(StandardCharsets.UTF_8));
    }

    /** {@link #matching(byte[], ReadMode)} of the UTF-8 text. */
    public Matches<T> matching(String json, ReadMode mode) {
        return matching(json.getBytes(StandardCharsets.UTF_8), mode);
    }

    /** The subscriptions that match a message given as its parts, and the groups that could not. */
    public Matches<T> matching(Message message) {
        return matching(message, ReadMode.VALIDATING);
    }

    /** {@link #matching(Message)}, reading a JSON body in {@code mode} (see {@link ReadMode}). */
    public Matches<T> matching(Message message, ReadMode mode) {
        return result(match(message.encoded, true, mode, false));
    }

    /**
     * The ids that match a JSON document.
     *
     * @throws MessageException when some group could not judge the message: one error per
     *     such group (use {@link #matching(byte[])} to deliver to the others)
     */
    public List<T> matchingStrict(byte[] json) {
        return matchingStrict(json, ReadMode.VALIDATING);
    }

    /**
     * {@link #matchingStrict(byte[])}, reading the document in {@code mode} (see
     * {@link ReadMode}).
     *
     * @throws MessageException when some group could not judge the message
     */
    public List<T> matchingStrict(byte[] json, ReadMode mode) {
        return result(match(json, false, mode, true)).ids();
    }

    /** {@link #matchingStrict(byte[])} for a message given as its parts. */
    public List<T> matchingStrict(Message message) {
        return matchingStrict(message, ReadMode.VALIDATING);
    }

    /** {@link #matchingStrict(Message)}, reading a JSON body in {@code mode}. */
    public List<T> matchingStrict(Message message, ReadMode mode) {
        return result(match(message.encoded, true, mode, true)).ids();
    }

    private Object match(byte[] message, boolean parts, ReadMode mode, boolean strict) {
        long s = handle.acquire();
        try {
            return Native.setMatching(s, message, parts, ReadMode.codeOf(mode), strict);
        } finally {
            handle.release();
        }
    }

    private Matches<T> result(Object raw) {
        long[] found;
        List<Unjudged> unjudged;
        if (raw instanceof long[]) {
            found = (long[]) raw;
            unjudged = List.of();
        } else {
            Object[] pair = (Object[]) raw;
            found = (long[]) pair[0];
            String[] g = (String[]) pair[1];
            List<Unjudged> groups = new ArrayList<>(g.length / 6);
            for (int i = 0; i + 5 < g.length; i += 6) {
                groups.add(new Unjudged(g[i], g[i + 1], Integer.parseInt(g[i + 2]), g[i + 3], g[i + 4], g[i + 5]));
            }
            unjudged = Collections.unmodifiableList(groups);
        }
        List<T> out = new ArrayList<>(found.length);
        for (long key : found) {
            // An id removed by another thread since the match is left out.
            T id = ids.get(key);
            if (id != null) {
                out.add(id);
            }
        }
        return new Matches<>(Collections.unmodifiableList(out), unjudged);
    }

    /** Releases the native set (idempotent; matches in flight on other threads finish first). */
    @Override
    public void close() {
        cleanable.clean();
    }

    @Override
    public String toString() {
        return "SubscriptionSet(" + size() + " subscriptions)";
    }
}
