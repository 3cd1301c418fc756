package dev.filtervm;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The native methods (the JNI library {@code libfiltervm_jni}, built by cargo from
 * {@code bindings/java/src}). Handles are the addresses of Rust objects: each is passed only
 * between {@link Handle#acquire()} and {@link Handle#release()} of the Java object owning it.
 *
 * <p>The library is loaded from the file named by the system property {@code filtervm.library}
 * when set, else from the jar ({@code /native/libfiltervm_jni.so}, copied to a temporary file),
 * else from {@code java.library.path}.
 */
final class Native {
    private Native() {}

    static {
        load();
    }

    private static void load() {
        String explicit = System.getProperty("filtervm.library");
        if (explicit != null && !explicit.isEmpty()) {
            System.load(Path.of(explicit).toAbsolutePath().toString());
            return;
        }
        try (InputStream in = Native.class.getResourceAsStream("/native/libfiltervm_jni.so")) {
            if (in != null) {
                Path file = Files.createTempFile("libfiltervm_jni", ".so");
                file.toFile().deleteOnExit();
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                System.load(file.toAbsolutePath().toString());
                return;
            }
        } catch (IOException e) {
            throw new UnsatisfiedLinkError("cannot copy the filtervm native library out of the jar: " + e);
        }
        System.loadLibrary("filtervm_jni");
    }

    static native long compile(byte[] dialect, byte[] policy, byte[] options);

    static native long fromBytes(byte[] bytes);

    static native byte[] toBytes(long filter);

    /** 0: the dialect, 1: the options as JSON, 2: the policy (null when loaded from bytes). */
    static native String filterText(long filter, int what);

    /** {@code readMode}: {@link ReadMode#codeOf(ReadMode)} (another value: INVALID_ARGUMENT). */
    static native boolean matches(long filter, byte[] message, boolean parts, int readMode);

    static native String explain(long filter, byte[] message, boolean parts);

    static native void freeFilter(long filter);

    static native long newSet();

    static native void setAdd(long set, long key, long filter);

    static native boolean setRemove(long set, long key);

    /**
     * A long[] of keys, or Object[] {long[] keys, String[] six fields per unjudged group}; with
     * {@code strict}, a MessageException instead of the latter. {@code readMode}: as for
     * {@link #matches(long, byte[], boolean, int)}.
     */
    static native Object setMatching(long set, byte[] message, boolean parts, int readMode, boolean strict);

    static native void freeSet(long set);

    /** The filters and sets alive on the native side. */
    static native long liveObjects();

    static native String[] dialects();

    /** Panics inside the native boundary (the tests check it becomes a PANIC exception). */
    static native void panicForTest();
}
