package dev.filtervm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.filtervm.Vectors.Vector;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * {@link ReadMode#TRUSTED} (README.md, "Trusted input"): on valid JSON every conformance vector
 * gets the same verdict in both read modes, through a filter (document and parts) and a set; a
 * document whose only faults are in members no filter reads is {@code MESSAGE_NOT_JSON} read
 * validating (the default) and gets a verdict read trusted; a null mode is
 * {@code INVALID_ARGUMENT}.
 */
class TrustedTest {
    /** Documents whose only faults are in a member no filter reads ({@code items}, {@code note}). */
    private static final Map<String, byte[]> FAULTY_UNREAD = new LinkedHashMap<>();

    static {
        FAULTY_UNREAD.put("an invalid literal",
                "{\"store\": \"example_corp\", \"items\": [01, tru]}".getBytes(StandardCharsets.UTF_8));
        byte[] head = "{\"store\": \"example_corp\", \"note\": \"".getBytes(StandardCharsets.UTF_8);
        byte[] doc = new byte[head.length + 4];
        System.arraycopy(head, 0, doc, 0, head.length);
        doc[head.length] = (byte) 0xff;
        doc[head.length + 1] = (byte) 0xfe;
        doc[head.length + 2] = '"';
        doc[head.length + 3] = '}';
        FAULTY_UNREAD.put("bytes that are not UTF-8", doc);
    }

    /**
     * The filters that read {@code store} in a body: an SNS policy on the message body and an
     * EventBridge pattern. A body given as {@link Message#ofBody(byte[])} is not judged as a
     * document: an SNS body that is not JSON is a message of its own (no match), so the parts
     * form checks the EventBridge pattern alone.
     */
    private record Reader(String dialect, String options, boolean parts) {}

    private static final List<Reader> READERS =
            List.of(new Reader("sns", "{\"scope\": \"MessageBody\"}", false), new Reader("eventbridge", null, true));

    @TestFactory
    Stream<DynamicTest> bothModesGiveEveryVectorItsVerdict() throws Exception {
        List<Vector> valid = Vectors.all().stream().filter(v -> !v.expect().equals("invalid")).toList();
        assertTrue(valid.size() > 500, valid.size() + " vectors");
        return valid.stream().map(v -> DynamicTest.dynamicTest(v.toString(), () -> {
            byte[] message = v.messageText().getBytes(StandardCharsets.UTF_8);
            try (Filter f = Filter.compile(v.dialect(), v.policyText(), v.options())) {
                if (VectorsTest.notAnEvent(v)) {
                    for (ReadMode mode : ReadMode.values()) {
                        assertEquals("INVALID_MESSAGE",
                                assertThrows(MessageException.class, () -> f.matches(message, mode)).code(), mode.name());
                    }
                    return;
                }
                boolean want = v.expect().equals("match");
                Message parts = VectorsTest.parts(v, f.optionsJson());
                try (SubscriptionSet<String> set = new SubscriptionSet<>()) {
                    set.add(v.id(), f);
                    for (ReadMode mode : ReadMode.values()) {
                        assertEquals(want, f.matches(message, mode), "as a document, " + mode);
                        assertEquals(want, f.matches(v.messageText(), mode), "as a String, " + mode);
                        if (parts != null) {
                            assertEquals(want, f.matches(parts, mode), "as parts, " + mode);
                        }
                        Matches<String> m = set.matching(message, mode);
                        assertTrue(m.isComplete(), m.toString());
                        assertEquals(want, m.contains(v.id()), "through a set, " + mode);
                    }
                }
            }
        }));
    }

    @Test
    void trustedReadingSkipsFaultsInMembersNoFilterReads() {
        for (Reader r : READERS) {
            try (Filter corp = Filter.compile(r.dialect(), "{\"store\": [\"example_corp\"]}", r.options());
                    Filter other = Filter.compile(r.dialect(), "{\"store\": [\"other_corp\"]}", r.options())) {
                for (Map.Entry<String, byte[]> c : FAULTY_UNREAD.entrySet()) {
                    byte[] doc = c.getValue();
                    String what = r.dialect() + ", " + c.getKey();
                    for (Filter f : List.of(corp, other)) {
                        boolean want = f == corp;
                        Map<String, Runnable> validating = new LinkedHashMap<>();
                        validating.put("matches(byte[])", () -> f.matches(doc));
                        validating.put("matches(byte[], VALIDATING)", () -> f.matches(doc, ReadMode.VALIDATING));
                        if (r.parts()) {
                            validating.put("matches(Message)", () -> f.matches(Message.ofBody(doc)));
                            validating.put("matches(Message, VALIDATING)",
                                    () -> f.matches(Message.ofBody(doc), ReadMode.VALIDATING));
                            assertEquals(want, f.matches(Message.ofBody(doc), ReadMode.TRUSTED), what + ", body");
                        }
                        for (Map.Entry<String, Runnable> call : validating.entrySet()) {
                            MessageException e = assertThrows(MessageException.class, call.getValue()::run,
                                    what + ", " + call.getKey());
                            assertEquals("MESSAGE_NOT_JSON", e.code(), what + ", " + call.getKey());
                        }
                        assertEquals(want, f.matches(doc, ReadMode.TRUSTED), what + ", document");
                    }
                }
            }
        }
    }

    @Test
    void inASetTrustedGivesTheIdsValidatingReportsTheGroup() {
        for (Reader r : READERS) {
            try (SubscriptionSet<String> set = new SubscriptionSet<>()) {
                for (String[] sub : List.of(new String[] {"corp", "example_corp"}, new String[] {"other", "other_corp"})) {
                    try (Filter f = Filter.compile(r.dialect(), "{\"store\": [\"" + sub[1] + "\"]}", r.options())) {
                        set.add(sub[0], f);
                    }
                }
                for (Map.Entry<String, byte[]> c : FAULTY_UNREAD.entrySet()) {
                    byte[] doc = c.getValue();
                    Map<String, Function<ReadMode, Matches<String>>> forms = new LinkedHashMap<>();
                    forms.put("document", mode -> set.matching(doc, mode));
                    if (r.parts()) {
                        forms.put("body", mode -> set.matching(Message.ofBody(doc), mode));
                    }
                    for (Map.Entry<String, Function<ReadMode, Matches<String>>> form : forms.entrySet()) {
                        String what = r.dialect() + ", " + c.getKey() + " as a " + form.getKey();
                        Matches<String> trusted = form.getValue().apply(ReadMode.TRUSTED);
                        assertEquals(List.of("corp"), trusted.ids(), what);
                        assertTrue(trusted.isComplete(), what + ": " + trusted);
                        Matches<String> validating = form.getValue().apply(ReadMode.VALIDATING);
                        assertEquals(List.of(), validating.ids(), what);
                        assertEquals(1, validating.unjudged().size(), what + ": " + validating);
                        Unjudged g = validating.unjudged().get(0);
                        assertEquals("MESSAGE_NOT_JSON", g.code(), what);
                        assertEquals(r.dialect(), g.dialect(), what);
                        assertEquals(2, g.subscriptions(), what);
                    }
                    // The defaults validate; matchingStrict throws for the unjudged group.
                    assertEquals("MESSAGE_NOT_JSON", set.matching(doc).unjudged().get(0).code());
                    assertEquals("MESSAGE_NOT_JSON",
                            assertThrows(MessageException.class, () -> set.matchingStrict(doc)).code());
                    assertEquals("MESSAGE_NOT_JSON",
                            assertThrows(MessageException.class, () -> set.matchingStrict(doc, ReadMode.VALIDATING)).code());
                    assertEquals(List.of("corp"), set.matchingStrict(doc, ReadMode.TRUSTED));
                }
            }
        }
    }

    @Test
    void aNullModeIsAnInvalidArgument() {
        try (Filter f = Filter.compile("sns", "{\"store\": [\"example_corp\"]}", "{\"scope\": \"MessageBody\"}");
                SubscriptionSet<Integer> set = new SubscriptionSet<>()) {
            set.add(1, f);
            byte[] doc = "{\"store\": \"example_corp\"}".getBytes(StandardCharsets.UTF_8);
            Message body = Message.ofBody(doc);
            for (Runnable call : List.<Runnable>of(() -> f.matches(doc, null), () -> f.matches("{}", null),
                    () -> f.matches(body, null), () -> set.matching(doc, null), () -> set.matching("{}", null),
                    () -> set.matching(body, null), () -> set.matchingStrict(doc, null),
                    () -> set.matchingStrict(body, null))) {
                FiltervmException e = assertThrows(FiltervmException.class, call::run);
                assertEquals("INVALID_ARGUMENT", e.code());
            }
            // The same document reads the same in both modes.
            for (ReadMode mode : ReadMode.values()) {
                assertTrue(f.matches(doc, mode), mode.name());
                assertEquals(List.of(1), set.matching(doc, mode).ids(), mode.name());
            }
        }
    }
}
