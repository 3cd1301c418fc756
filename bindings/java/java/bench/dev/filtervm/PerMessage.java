package dev.filtervm;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * The Java side of the binding's cost per message (BENCHMARKS.md, "Java"): the same messages and
 * policies as the Rust side ({@code bindings/java/examples/per_message.rs}).
 *
 * <pre>
 * bash bindings/java/bench.sh bench-data
 * </pre>
 *
 * The first 10,000 lines of the messages file (flat JSON objects) as a {@link Message} of
 * attributes (strings → String, numbers → Number; built beforehand, or built on each call) and as
 * a JSON document; the single filter is the first line of the first policy file, the set the
 * first 1,000 lines of the second. Prints {@code name: ns} lines, the median of 5 rounds of at
 * least 0.3 s each (CPU time of this thread, as the Rust side measures it), after 3 s of
 * warm-up per route (the JIT compiles the loop first).
 */
public final class PerMessage {
    private static final int MESSAGES = 10_000;
    private static final int SUBSCRIPTIONS = 1_000;

    private PerMessage() {}

    /**
     * The time this thread has spent on a CPU, in ns ({@code /proc/thread-self/schedstat}, as
     * the Rust side reads it): the machine is shared, and wall time would count the time other
     * processes ran. The JIT's and the garbage collector's threads are not counted.
     */
    private static double cpuNs() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/thread-self/schedstat")).split(" ")[0]);
        } catch (java.io.IOException e) {
            return Double.NaN;
        }
    }

    private static void report(String name, int n, IntSupplier round) {
        long warm = System.nanoTime();
        while (System.nanoTime() - warm < 3_000_000_000L) {
            round.getAsInt();
        }
        double[] perMessage = new double[5];
        long sink = 0;
        for (int r = 0; r < 5; r++) {
            long start = System.nanoTime();
            double cpu = cpuNs();
            long passes = 0;
            while (System.nanoTime() - start < 300_000_000L) {
                sink += round.getAsInt();
                passes++;
            }
            perMessage[r] = (cpuNs() - cpu) / passes / n;
        }
        java.util.Arrays.sort(perMessage);
        System.out.printf("%s: %.1f%s%n", name, perMessage[2], sink == 42 ? " " : "");
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        String single = Files.readAllLines(Path.of(args[0])).get(0);
        List<String> many = Files.readAllLines(Path.of(args[1])).subList(0, SUBSCRIPTIONS);
        List<String> lines = Files.readAllLines(Path.of(args[2]), StandardCharsets.UTF_8);
        lines = lines.subList(0, Math.min(MESSAGES, lines.size()));
        int n = lines.size();
        byte[][] documents = new byte[n][];
        Message[] messages = new Message[n];
        List<List<String[]>> attributes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            documents[i] = lines.get(i).getBytes(StandardCharsets.UTF_8);
            List<String[]> triples = new ArrayList<>();
            for (Map.Entry<String, Object> e : ((Map<String, Object>) Json.parse(lines.get(i))).entrySet()) {
                if (e.getValue() instanceof String s) {
                    triples.add(new String[] {e.getKey(), "String", s});
                } else if (e.getValue() instanceof Json.Num num) {
                    triples.add(new String[] {e.getKey(), "Number", num.text()});
                }
            }
            attributes.add(triples);
            messages[i] = build(triples);
        }
        Filter filter = Filter.compile("sns", single);
        Filter body = Filter.compile("sns", single, "{\"scope\": \"MessageBody\"}");
        SubscriptionSet<Integer> set = new SubscriptionSet<>();
        for (int i = 0; i < many.size(); i++) {
            try (Filter f = Filter.compile("sns", many.get(i))) {
                set.add(i, f);
            }
        }
        IntSupplier jniCall = () -> {
            int k = 0;
            for (int i = 0; i < n; i++) {
                k += (int) Native.liveObjects();
            }
            return k;
        };
        IntSupplier filterAttributes = () -> {
            int k = 0;
            for (Message m : messages) {
                k += filter.matches(m) ? 1 : 0;
            }
            return k;
        };
        IntSupplier filterAttributesBuilt = () -> {
            int k = 0;
            for (List<String[]> t : attributes) {
                k += filter.matches(build(t)) ? 1 : 0;
            }
            return k;
        };
        IntSupplier filterDocumentBody = () -> {
            int k = 0;
            for (byte[] d : documents) {
                k += body.matches(d) ? 1 : 0;
            }
            return k;
        };
        IntSupplier setAttributes = () -> {
            int k = 0;
            for (Message m : messages) {
                k += set.matching(m).ids().size();
            }
            return k;
        };
        IntSupplier setAttributesBuilt = () -> {
            int k = 0;
            for (List<String[]> t : attributes) {
                k += set.matching(build(t)).ids().size();
            }
            return k;
        };
        System.out.printf("matches per pass: filter_attributes %d, filter_document_body %d, set_attributes %d%n",
                filterAttributes.getAsInt(), filterDocumentBody.getAsInt(), setAttributes.getAsInt());
        String only = System.getenv("FILTERVM_ROUTE");
        String[] names = {"jni_call", "java_filter_attributes", "java_filter_attributes_built",
            "java_filter_document_body", "java_set_attributes", "java_set_attributes_built"};
        IntSupplier[] routes = {jniCall, filterAttributes, filterAttributesBuilt, filterDocumentBody, setAttributes,
            setAttributesBuilt};
        for (int i = 0; i < names.length; i++) {
            if (only == null || only.equals(names[i])) {
                report(names[i], n, routes[i]);
            }
        }
        System.out.println("messages: " + n + ", subscriptions: " + set.size());
    }

    private static Message build(List<String[]> triples) {
        Message.Builder b = Message.builder();
        for (String[] t : triples) {
            b.attribute(t[0], t[1], t[2]);
        }
        return b.build();
    }
}
