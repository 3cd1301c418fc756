package dev.filtervm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The API's promises: errors with every detail, messages as parts, closing, the panic boundary. */
class ApiTest {
    @Test
    void aPolicyExceptionListsEveryErrorWithCodeAndPointer() {
        PolicyException e = assertThrows(PolicyException.class,
                () -> Filter.compile("sns", "{\"a\": [{\"numeric\": [\">\"]}], \"b\": [{\"prefix\": 5}]}"));
        assertEquals(2, e.errors().size(), e.errors().toString());
        assertEquals("/a/0/numeric", e.errors().get(0).pointer());
        assertEquals("/b/0/prefix", e.errors().get(1).pointer());
        assertEquals(e.errors().get(0).code(), e.code());
        assertTrue(e.getMessage().contains(" at /b/0/prefix: "), e.getMessage());
        // Options are the policy's too: INVALID_OPTIONS, pointing at the option.
        PolicyException o = assertThrows(PolicyException.class,
                () -> Filter.compile("sns", "{}", "{\"scope\": \"Nowhere\"}"));
        assertEquals("INVALID_OPTIONS", o.code());
        assertEquals("/scope", o.pointer());
    }

    @Test
    void anUnknownDialectIsAnInvalidArgumentAndBadBytesALoadException() {
        FiltervmException e = assertThrows(FiltervmException.class, () -> Filter.compile("nope", "{}"));
        assertFalse(e instanceof PolicyException);
        assertEquals("INVALID_ARGUMENT", e.code());
        LoadException l = assertThrows(LoadException.class, () -> Filter.fromBytes(new byte[] {1, 2, 3}));
        assertFalse(l.code().isEmpty());
        try (Filter f = Filter.compile("sns", "{}")) {
            assertEquals("INVALID_ARGUMENT", assertThrows(FiltervmException.class, () -> f.matches((byte[]) null)).code());
        }
    }

    @Test
    void aMessageExceptionHasTheCodeOfTheSituation() {
        try (Filter f = Filter.compile("sns", "{\"a\": [\"x\"]}")) {
            MessageException e = assertThrows(MessageException.class, () -> f.matches("{\"attributes\": "));
            assertEquals("MESSAGE_NOT_JSON", e.code());
        }
        try (Filter f = Filter.compile("stream", "r = x")) {
            MessageException e = assertThrows(MessageException.class,
                    () -> f.matches(Message.builder().header("r", "x", "y").build()));
            assertEquals("INVALID_MESSAGE", e.code());
            assertEquals("MESSAGE_SHAPE", assertThrows(MessageException.class,
                    () -> f.matches(Message.builder().attribute("r", "x").build())).code());
        }
    }

    @Test
    void attributesOfEveryKindAreReadAsTheLibraryReadsThem() {
        try (Filter f = Filter.compile("sns",
                "{\"s\": [\"x\"], \"n\": [{\"numeric\": [\">\", 1.5]}], \"d\": [0.25], \"arr\": [\"b\"]}")) {
            Message.Builder b = Message.builder().attribute("s", "x").attribute("n", 2)
                    .attribute("d", new BigDecimal("0.250")).attribute("arr", "String.Array", "[\"a\", \"b\"]")
                    .binaryAttribute("bin", new byte[] {0, 1});
            assertTrue(f.matches(b.build()));
            assertFalse(f.matches(b.attribute("n", 1.5).build()), "the last of two attributes with one name counts");
            assertThrows(IllegalArgumentException.class, () -> Message.builder().attribute("n", Double.NaN));
            // An unknown type name: INVALID_MESSAGE at the attribute's type, for filters reading attributes.
            MessageException e = assertThrows(MessageException.class,
                    () -> f.matches(Message.builder().attribute("s", "Strung", "x").build()));
            assertEquals("INVALID_MESSAGE", e.code());
            assertEquals("/attributes/s/Type", e.pointer());
        }
        assertThrows(IllegalStateException.class, () -> Message.builder().build());
    }

    @Test
    void aBodyAndNonAsciiTextReachTheFilterUnchanged() {
        try (Filter f = Filter.compile("sns", "{\"city\": [\"Zürich\"], \"e\": [\"\uD83D\uDE00\"]}", "{\"scope\": \"MessageBody\"}")) {
            assertTrue(f.matches(Message.builder().body("{\"city\": \"Zürich\", \"e\": \"\uD83D\uDE00\"}").build()));
            assertFalse(f.matches(Message.ofBody("{\"city\": \"Zurich\"}".getBytes(StandardCharsets.UTF_8))));
            assertEquals("{\"scope\":\"MessageBody\"}", f.optionsJson().replace(" ", ""));
        }
        try (Filter f = Filter.compile("stream", "city = \"Zürich\"")) {
            assertTrue(f.matches(Message.builder().header("city", "Zürich").build()));
            assertEquals("city = \"Zürich\"", f.policy());
        }
    }

    @Test
    void bytesRoundTripAndExplainSaysWhy() {
        try (Filter f = Filter.compile("expr", "{\"key\": \"a\", \"op\": \"in\", \"value\": [\"x\"]}")) {
            byte[] bytes = f.toBytes();
            try (Filter g = Filter.fromBytes(bytes)) {
                assertArrayEquals(bytes, g.toBytes());
                assertEquals("expr", g.dialect());
                assertNull(g.policy());
                assertTrue(g.matches(Message.builder().header("a", "x").build()));
            }
            String why = f.explain(Message.builder().header("a", "y").build());
            assertTrue(why.contains("\"matched\":false"), why);
            assertTrue(why.contains("\"conditions\""), why);
        }
    }

    @Test
    void aClosedObjectThrowsAndCloseIsIdempotent() {
        Filter f = Filter.compile("sns", "{}");
        f.close();
        f.close();
        assertThrows(IllegalStateException.class, () -> f.matches("{}"));
        assertEquals("Filter(closed)", f.toString());
        SubscriptionSet<Integer> s = new SubscriptionSet<>();
        s.close();
        assertThrows(IllegalStateException.class, () -> s.matching("{}"));
        try (Filter g = Filter.compile("sns", "{}")) {
            assertThrows(IllegalStateException.class, () -> s.add(1, g));
        }
    }

    @Test
    void aSetKeepsItsOwnFilterAndReplacesAndRemovesById() {
        try (SubscriptionSet<List<Integer>> s = new SubscriptionSet<>()) {
            Filter a = Filter.compile("sns", "{\"a\": [\"x\"]}");
            s.add(List.of(1), a);
            a.close();
            Message x = Message.builder().attribute("a", "x").build();
            assertEquals(List.of(List.of(1)), s.matching(x).ids());
            try (Filter b = Filter.compile("sns", "{\"a\": [\"y\"]}")) {
                s.add(List.of(1), b);
                s.add(List.of(2), b);
            }
            assertEquals(2, s.size());
            assertEquals(List.of(), s.matching(x).ids());
            assertTrue(s.remove(List.of(2)));
            assertFalse(s.remove(List.of(2)));
            assertEquals(List.of(List.of(1)), s.matching(Message.builder().attribute("a", "y").build()).ids());
            assertFalse(s.contains(List.of(2)));
        }
    }

    @Test
    void aPanicInsideTheLibraryBecomesAnExceptionAndTheJvmLivesOn() {
        FiltervmException e = assertThrows(FiltervmException.class, Native::panicForTest);
        assertEquals("PANIC", e.code());
        assertTrue(e.getMessage().contains("a test panic"), e.getMessage());
        try (Filter f = Filter.compile("sns", "{}")) {
            assertTrue(f.matches("{\"attributes\": {}}"));
        }
    }

    @Test
    void everyDialectIsListed() {
        assertTrue(Filter.dialects().containsAll(List.of("sns", "basaltic", "eventgrid", "stream", "expr")),
                Filter.dialects().toString());
    }
}
