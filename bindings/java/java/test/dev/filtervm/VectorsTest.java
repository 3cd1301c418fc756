package dev.filtervm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.filtervm.Vectors.Vector;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every conformance vector of every dialect through Java: invalid policies throw
 * PolicyException with their code, and every match / no-match verdict holds for the message
 * given as a JSON document, as its parts (Message: attributes, headers or body), for a filter
 * loaded from its bytes, and through one SubscriptionSet per vector file and options.
 */
class VectorsTest {
    private static final List<Vector> VECTORS = load();

    private static List<Vector> load() {
        try {
            return Vectors.all();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<Vector> valid() {
        return VECTORS.stream().filter(v -> !v.expect().equals("invalid")).toList();
    }

    @Test
    void theVectorsOfEveryDialectAreAllHere() {
        Set<String> dialects = new HashSet<>();
        VECTORS.forEach(v -> dialects.add(v.dialect()));
        assertEquals(new HashSet<>(Filter.dialects()), dialects);
        long invalid = VECTORS.stream().filter(v -> v.expect().equals("invalid")).count();
        assertTrue(valid().size() > 500 && invalid > 150, valid().size() + " / " + invalid);
        VECTORS.forEach(v -> assertTrue(Set.of("match", "no-match", "invalid").contains(v.expect()), v.toString()));
        // Nearly every valid vector is also matched as its parts (the rest carry values no
        // part holds, such as an attribute value that is a JSON object).
        List<Vector> events = valid().stream().filter(v -> !notAnEvent(v)).toList();
        long asParts = events.stream().filter(v -> {
            try (Filter f = Filter.compile(v.dialect(), v.policyText(), v.options())) {
                return parts(v, f.optionsJson()) != null;
            }
        }).count();
        assertTrue(asParts * 10 >= events.size() * 9, asParts + " of " + events.size());
    }

    @TestFactory
    Stream<DynamicTest> anInvalidPolicyThrowsPolicyExceptionWithItsCode() {
        return VECTORS.stream().filter(v -> v.expect().equals("invalid")).map(v -> DynamicTest.dynamicTest(v.toString(), () -> {
            PolicyException e = assertThrows(PolicyException.class,
                    () -> Filter.compile(v.dialect(), v.policyText(), v.options()).close());
            assertFalse(e.errors().isEmpty());
            for (ErrorDetail d : e.errors()) {
                assertTrue(d.code().matches("[A-Z0-9_]+") && !d.message().isEmpty(), d.toString());
            }
            if (v.error() != null) {
                // The runner's rule (conformance/FORMAT.md): the code or a message holds the word.
                String word = v.error().toLowerCase();
                assertTrue(e.errors().stream().anyMatch(d -> d.code().toLowerCase().contains(word)
                        || d.message().toLowerCase().contains(word)), e.errors().toString());
            }
        }));
    }

    /** Whether the Event Grid event is not a JSON object: every binding refuses it (filtervm/MESSAGES.md). */
    static boolean notAnEvent(Vector v) {
        return v.dialect().equals("eventgrid") && !(Json.parse(v.messageText()) instanceof Map);
    }

    /** The vector's message as the parts its dialect reads (null: no such form). */
    @SuppressWarnings("unchecked")
    static Message parts(Vector v, String optionsJson) {
        Object parsed = Json.parse(v.messageText());
        if (!(parsed instanceof Map)) {
            return null;
        }
        Map<String, Object> message = (Map<String, Object>) parsed;
        Message.Builder b = Message.builder();
        switch (v.dialect()) {
            case "stream", "expr" -> {
                b.headers();
                Object headers = message.get("headers");
                if (headers instanceof Map) {
                    for (Map.Entry<String, Object> h : ((Map<String, Object>) headers).entrySet()) {
                        if (h.getValue() instanceof List) {
                            List<String> values = new ArrayList<>();
                            for (Object x : (List<Object>) h.getValue()) {
                                if (!(x instanceof String)) {
                                    return null;
                                }
                                values.add((String) x);
                            }
                            b.header(h.getKey(), values);
                        } else if (h.getValue() instanceof String) {
                            b.header(h.getKey(), (String) h.getValue());
                        } else {
                            return null;
                        }
                    }
                }
            }
            case "eventgrid", "eventbridge" -> b.body(v.messageText());
            default -> {
                if (v.dialect().equals("sns") && optionsJson.contains("MessageBody")) {
                    Object body = message.get("body");
                    if (!(body instanceof String)) {
                        return null;
                    }
                    b.body((String) body);
                } else {
                    b.attributes();
                    Object attributes = message.get("attributes");
                    if (attributes instanceof Map) {
                        for (Map.Entry<String, Object> a : ((Map<String, Object>) attributes).entrySet()) {
                            if (!(a.getValue() instanceof Map)) {
                                return null;
                            }
                            Map<String, Object> typed = (Map<String, Object>) a.getValue();
                            Object type = typed.containsKey("Type") ? typed.get("Type") : typed.get("type");
                            Object value = typed.containsKey("Value") ? typed.get("Value") : typed.get("value");
                            if (!(type instanceof String) || !(value instanceof String || value instanceof Json.Num)) {
                                return null;
                            }
                            b.attribute(a.getKey(), (String) type, value.toString());
                        }
                    }
                }
            }
        }
        return b.build();
    }

    @TestFactory
    Stream<DynamicTest> anEventThatIsNotAnObjectIsInvalidMessage() {
        return valid().stream().filter(VectorsTest::notAnEvent).map(v -> DynamicTest.dynamicTest(v.toString(), () -> {
            try (Filter f = Filter.compile(v.dialect(), v.policyText(), v.options())) {
                for (Runnable r : List.<Runnable>of(() -> f.matches(v.messageText()),
                        () -> f.matches(Message.ofBody(v.messageText().getBytes(StandardCharsets.UTF_8))))) {
                    assertEquals("INVALID_MESSAGE", assertThrows(MessageException.class, r::run).code());
                }
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> everyMessageFormGivesTheVectorVerdict() {
        return valid().stream().filter(v -> !notAnEvent(v)).map(v -> DynamicTest.dynamicTest(v.toString(), () -> {
            boolean want = v.expect().equals("match");
            try (Filter f = Filter.compile(v.dialect(), v.policyText(), v.options())) {
                assertEquals(want, f.matches(v.messageText().getBytes(StandardCharsets.UTF_8)), "as a document");
                assertEquals(want, f.matches(v.messageText()), "as a String");
                Message parts = parts(v, f.optionsJson());
                if (parts != null) {
                    assertEquals(want, f.matches(parts), "as parts");
                }
                try (Filter loaded = Filter.fromBytes(f.toBytes())) {
                    assertEquals(want, loaded.matches(v.messageText()), "loaded from bytes");
                    assertNull(loaded.policy());
                    assertEquals(f.dialect(), loaded.dialect());
                }
                // explain agrees with matches.
                assertTrue(f.explain(v.messageText().getBytes(StandardCharsets.UTF_8))
                        .contains("\"matched\":" + want + ","), "explain");
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> oneSetPerFileAndOptionsGivesEveryVerdict() {
        // A vector's message carries the part its own options read, so one set holds the
        // vectors of one options value (a group whose part a message lacks is left unjudged).
        Map<String, List<Vector>> groups = new TreeMap<>();
        for (Vector v : valid()) {
            if (notAnEvent(v)) {
                continue;
            }
            String options;
            try (Filter f = Filter.compile(v.dialect(), v.policyText(), v.options())) {
                options = f.optionsJson();
            }
            groups.computeIfAbsent(v.file() + " " + options, k -> new ArrayList<>()).add(v);
        }
        return groups.entrySet().stream().map(g -> DynamicTest.dynamicTest(g.getKey(), () -> {
            try (SubscriptionSet<String> set = new SubscriptionSet<>()) {
                Map<String, Vector> byId = new LinkedHashMap<>();
                for (Vector v : g.getValue()) {
                    try (Filter f = Filter.compile(v.dialect(), v.policyText(), v.options())) {
                        set.add(v.id(), f);
                    }
                    byId.put(v.id(), v);
                }
                assertEquals(g.getValue().size(), set.size());
                for (Vector v : g.getValue()) {
                    Matches<String> got = set.matching(v.messageText());
                    assertTrue(got.isComplete(), got.unjudged().toString());
                    assertEquals(v.expect().equals("match"), got.contains(v.id()), v.id());
                    assertEquals(got.ids(), set.matchingStrict(v.messageText().getBytes(StandardCharsets.UTF_8)));
                }
            }
        }));
    }
}
