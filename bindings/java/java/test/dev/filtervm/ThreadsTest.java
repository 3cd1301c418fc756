package dev.filtervm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Several threads match one set while another adds and removes subscriptions, and a filter is
 * closed while threads match with it: every answer is one the set could give at some moment
 * (the stable subscriptions always, the churning ones only with their own filter's verdict), and
 * nothing crashes or touches freed memory.
 */
class ThreadsTest {
    @Test
    void matchingThreadsSeeConsistentAnswersWhileAnotherThreadAddsAndRemoves() throws Exception {
        try (SubscriptionSet<String> set = new SubscriptionSet<>();
                Filter x = Filter.compile("sns", "{\"a\": [\"x\"]}");
                Filter y = Filter.compile("sns", "{\"a\": [\"y\"]}");
                Filter s = Filter.compile("stream", "a = x")) {
            set.add("stable-x", x);
            set.add("stable-y", y);
            Message mx = Message.builder().attribute("a", "x").build();
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
            AtomicLong matched = new AtomicLong();
            int matchers = 3;
            CountDownLatch started = new CountDownLatch(matchers + 1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < matchers; t++) {
                threads.add(new Thread(() -> {
                    started.countDown();
                    while (!stop.get()) {
                        Matches<String> m = set.matching(mx);
                        matched.incrementAndGet();
                        if (!m.ids().contains("stable-x") || m.ids().contains("stable-y")) {
                            wrong.add("stable: " + m.ids());
                        }
                        for (String id : m.ids()) {
                            if (id.startsWith("churn-y") || id.startsWith("churn-s")) {
                                wrong.add("a churning subscription whose filter does not match: " + id);
                            }
                        }
                        // The stream group cannot read attributes: unjudged, never an exception.
                        for (Unjudged g : m.unjudged()) {
                            if (!g.dialect().equals("stream") || !g.code().equals("MESSAGE_SHAPE")) {
                                wrong.add("unjudged: " + g);
                            }
                        }
                    }
                }));
            }
            threads.add(new Thread(() -> {
                started.countDown();
                for (int i = 0; i < 3000; i++) {
                    set.add("churn-x" + (i % 50), x);
                    set.add("churn-y" + (i % 50), y);
                    set.add("churn-s" + (i % 7), s);
                    set.remove("churn-x" + ((i + 25) % 50));
                    set.remove("churn-y" + ((i + 25) % 50));
                    if (i % 3 == 0) {
                        set.remove("churn-s" + (i % 7));
                    }
                }
                stop.set(true);
            }));
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(120_000);
            }
            assertTrue(wrong.isEmpty(), wrong.toString());
            assertTrue(matched.get() > 100, "matches: " + matched.get());
            assertTrue(set.matching(mx).ids().contains("stable-x"));
        }
    }

    @Test
    void closingAFilterWhileOtherThreadsMatchWithItNeverTouchesFreedMemory() throws Exception {
        for (int round = 0; round < 200; round++) {
            Filter f = Filter.compile("sns", "{\"a\": [\"x\"]}");
            Message m = Message.builder().attribute("a", "x").build();
            ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                threads.add(new Thread(() -> {
                    try {
                        for (int i = 0; i < 1000; i++) {
                            if (!f.matches(m)) {
                                unexpected.add(new AssertionError("no match"));
                            }
                        }
                    } catch (IllegalStateException closed) {
                        // The filter was closed: the only other outcome.
                    } catch (Throwable e) {
                        unexpected.add(e);
                    }
                }));
            }
            threads.forEach(Thread::start);
            f.close();
            for (Thread t : threads) {
                t.join();
            }
            assertEquals(List.of(), new ArrayList<>(unexpected));
        }
    }
}
