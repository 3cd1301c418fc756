package dev.filtervm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.filtervm.Vectors.Vector;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The event-ruler-shaped classes on the eventbridge vectors (conformance/vectors/eventbridge.jsonl
 * and local/eventbridge.jsonl):
 * {@code Ruler.matchesRule} gives each vector's verdict, one {@code Machine} holding every valid
 * vector's pattern as a rule returns for each event exactly the rules whose patterns match it on
 * their own, and an invalid pattern is an IOException with its code, as event-ruler's are.
 */
class MachineTest {
    /** The public and the local eventbridge vectors. */
    private static List<Vector> vectors() throws IOException {
        List<Vector> out = new ArrayList<>(Vectors.file("eventbridge.jsonl"));
        out.addAll(Vectors.file("local/eventbridge.jsonl"));
        assertTrue(out.size() >= 300, "eventbridge vectors: " + out.size());
        return out;
    }

    @TestFactory
    Stream<DynamicTest> rulerMatchesRuleGivesEveryVerdict() throws IOException {
        return vectors().stream().map(v -> DynamicTest.dynamicTest(v.toString(), () -> {
            if (v.expect().equals("invalid")) {
                InvalidPatternException e = assertThrows(InvalidPatternException.class,
                        () -> Ruler.matchesRule("{}", v.policyText()));
                assertFalse(e.errors().isEmpty());
                if (v.error() != null) {
                    String word = v.error().toLowerCase();
                    assertTrue(e.errors().stream().anyMatch(d -> d.code().toLowerCase().contains(word)
                            || d.message().toLowerCase().contains(word)), e.errors().toString());
                }
                try (Machine m = new Machine()) {
                    assertThrows(IOException.class, () -> m.addRule(v.id(), v.policyText()));
                    assertTrue(m.isEmpty());
                }
            } else {
                assertEquals(v.expect().equals("match"), Ruler.matchesRule(v.messageText(), v.policyText()));
            }
        }));
    }

    @Test
    void oneMachineReturnsExactlyTheRulesThatMatchEachEventOnTheirOwn() throws Exception {
        List<Vector> valid = vectors().stream().filter(v -> !v.expect().equals("invalid")).toList();
        Map<String, Filter> alone = new LinkedHashMap<>();
        try (Machine machine = new Machine()) {
            for (Vector v : valid) {
                machine.addRule(v.toString(), v.policyText());
                alone.put(v.toString(), Filter.compile("eventbridge", v.policyText(), null));
            }
            int matched = 0;
            for (Vector v : valid) {
                List<String> want = new ArrayList<>();
                for (Map.Entry<String, Filter> r : alone.entrySet()) {
                    if (r.getValue().matches(v.messageText())) {
                        want.add(r.getKey());
                    }
                }
                List<String> got = machine.rulesForJSONEvent(v.messageText());
                assertEquals(want, got, v.toString());
                assertEquals(v.expect().equals("match"), got.contains(v.toString()), v.toString());
                matched += got.size();
            }
            assertTrue(matched >= valid.size() / 3, "matches: " + matched);
        } finally {
            alone.values().forEach(Filter::close);
        }
    }

    @Test
    void aRuleOfSeveralPatternsMatchesWhenAnyDoesAndLosesThemOneByOne() throws Exception {
        try (Machine m = new Machine()) {
            m.addRule("r", "{\"a\": [\"x\"]}");
            m.addRule("r", "{\"b\": [\"y\"]}");
            m.addRule("r", "{\"a\": [\"x\"]}");
            m.addRule("s", "{\"a\": [\"x\"]}");
            assertEquals(List.of("r", "s"), m.rulesForJSONEvent("{\"a\": \"x\", \"b\": \"y\"}"));
            assertEquals(List.of("r"), m.rulesForJSONEvent("{\"b\": \"y\"}"));
            // The same pattern, spaced otherwise, is the pattern added.
            m.deleteRule("r", "{ \"a\" : [ \"x\" ] }");
            assertEquals(List.of("s"), m.rulesForJSONEvent("{\"a\": \"x\"}"));
            m.deleteRule("r", "{\"c\": [\"z\"]}");
            m.deleteRule("nobody", "{\"b\": [\"y\"]}");
            assertEquals(List.of("r"), m.rulesForJSONEvent("{\"b\": \"y\"}"));
            m.deleteRule("r", "{\"b\": [\"y\"]}");
            m.deleteRule("s", "{\"a\": [\"x\"]}");
            assertTrue(m.isEmpty());
            assertEquals(List.of(), m.rulesForJSONEvent("{\"a\": \"x\", \"b\": \"y\"}"));
        }
    }

    @Test
    void anEventThatIsNotAJsonObjectIsAnError() throws Exception {
        try (Machine m = new Machine()) {
            m.addRule("r", "{\"a\": [\"x\"]}");
            assertThrows(MessageException.class, () -> m.rulesForJSONEvent("{\"a\": "));
            assertThrows(MessageException.class, () -> m.rulesForJSONEvent("[1]"));
        }
        assertThrows(MessageException.class, () -> Ruler.matchesRule("5", "{\"a\": [\"x\"]}"));
    }
}
