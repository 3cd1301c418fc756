package dev.filtervm;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * One native object's handle and its lifetime: the native calls in flight are counted, and the
 * object is freed exactly once, after {@link #close()} (from {@code close()} of its owner, or from
 * the {@link Cleaner} when the owner became unreachable) and after the last call in flight
 * returned. A call on a closed handle throws {@link IllegalStateException}, never touches freed
 * memory.
 *
 * <p>This is the {@code Cleaner}'s action: it holds no reference to its owner.
 */
final class Handle implements Runnable {
    /** The Cleaner of every filtervm object (one daemon thread). */
    static final Cleaner CLEANER = Cleaner.create();

    private static final long CLOSED = 1L << 62;

    private final long address;
    private final LongConsumer free;
    private final String what;
    /** The calls in flight, plus {@link #CLOSED} once closed. */
    private final AtomicLong state = new AtomicLong();
    private final AtomicBoolean freed = new AtomicBoolean();

    Handle(long address, LongConsumer free, String what) {
        this.address = address;
        this.free = free;
        this.what = what;
    }

    /** The address, counted as in use until {@link #release()}. */
    long acquire() {
        for (;;) {
            long s = state.get();
            if ((s & CLOSED) != 0) {
                throw new IllegalStateException("the " + what + " is closed");
            }
            if (state.compareAndSet(s, s + 1)) {
                return address;
            }
        }
    }

    /** Ends a call begun by {@link #acquire()}. */
    void release() {
        if (state.decrementAndGet() == CLOSED) {
            freeOnce();
        }
    }

    /** Closes: the object is freed now, or when the last call in flight returns. */
    void close() {
        long before = state.getAndUpdate(s -> s | CLOSED);
        if (before == 0) {
            freeOnce();
        }
    }

    boolean isClosed() {
        return (state.get() & CLOSED) != 0;
    }

    @Override
    public void run() {
        close();
    }

    private void freeOnce() {
        if (freed.compareAndSet(false, true)) {
            free.accept(address);
        }
    }
}
