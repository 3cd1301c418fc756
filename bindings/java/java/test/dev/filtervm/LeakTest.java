package dev.filtervm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Native memory is released: a million create/close cycles leave the native side's live-object
 * counter where it was and the process's resident memory (VmRSS) within a bound a leak of even a
 * few bytes per cycle would exceed; filters and sets never closed are freed by the Cleaner.
 */
class LeakTest {
    static final int CYCLES = Integer.getInteger("filtervm.leak.cycles", 1_000_000);

    /** The process's resident memory, in kB (/proc/self/status VmRSS). */
    static long rssKb() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    @Test
    void aMillionCreateCloseCyclesLeakNoNativeMemory() throws IOException, InterruptedException {
        byte[] bytes;
        try (Filter f = Filter.compile("sns", "{\"a\": [\"x\"], \"n\": [{\"numeric\": [\">\", 5]}]}")) {
            bytes = f.toBytes();
        }
        Message m = Message.builder().attribute("a", "x").attribute("n", 7).build();
        long live = settledLiveObjects();
        long rssAfterWarmup = 0;
        int warmup = CYCLES / 10;
        for (int i = 0; i < CYCLES; i++) {
            // Each cycle makes a filter (loaded from bytes; every 100th compiled from its
            // policy), matches with it, and every 10th cycle also a set holding it.
            Filter f = i % 100 == 0 ? Filter.compile("sns", "{\"a\": [\"x\"]}") : Filter.fromBytes(bytes);
            if (!f.matches(m)) {
                throw new AssertionError("no match at cycle " + i);
            }
            if (i % 10 == 0) {
                SubscriptionSet<Integer> s = new SubscriptionSet<>();
                s.add(i, f);
                if (s.matching(m).ids().size() != 1) {
                    throw new AssertionError("set at cycle " + i);
                }
                s.close();
            }
            f.close();
            if (i == warmup) {
                System.gc();
                rssAfterWarmup = rssKb();
            }
        }
        assertEquals(live, Native.liveObjects(), "native objects alive after " + CYCLES + " cycles");
        System.gc();
        long grown = rssKb() - rssAfterWarmup;
        // 900,000 cycles after the warm-up: a leak of 16 bytes per cycle would be 14 MB.
        assertTrue(grown < 12_000, "VmRSS grew by " + grown + " kB over " + (CYCLES - warmup) + " cycles");
        System.out.println("LeakTest: " + CYCLES + " cycles, live objects " + live + " -> " + Native.liveObjects()
                + ", VmRSS after warm-up " + rssAfterWarmup + " kB, grown by " + grown + " kB");
    }

    /** The live objects once the Cleaner freed what earlier tests left unreachable. */
    static long settledLiveObjects() throws InterruptedException {
        long before;
        long now = Native.liveObjects();
        do {
            before = now;
            System.gc();
            Thread.sleep(100);
            now = Native.liveObjects();
        } while (now != before);
        return now;
    }

    @Test
    void theCleanerFreesWhatWasNeverClosed() throws InterruptedException {
        long live = settledLiveObjects();
        for (int i = 0; i < 10_000; i++) {
            Filter f = Filter.compile("sns", "{\"a\": [\"x\"]}");
            new SubscriptionSet<Integer>().add(i, f);
        }
        assertTrue(Native.liveObjects() >= live + 10_000, "the objects were made");
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (Native.liveObjects() > live && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(50);
        }
        assertEquals(live, Native.liveObjects(), "the Cleaner freed every unreachable filter and set");
    }
}
