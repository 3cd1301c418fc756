package dev.filtervm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The message table's situations through Java (tests/situations.jsonl, the fixture every entry
 * point reads; its format is described in filtervm/tests/situations.rs): each gives the same
 * verdict or code as through Rust, C and Python — for a filter on its own, and in a set beside a
 * witness filter that can read any message, which still gets the message when the situation's
 * filter cannot judge it.
 */
class SituationsTest {
    /** The parts of a case as a Message: attributes as (name, type, value), headers as a name to a String or a list. */
    @SuppressWarnings("unchecked")
    static Message message(Map<String, Object> parts) {
        Message.Builder b = Message.builder();
        if (parts.containsKey("body")) {
            b.body((String) parts.get("body"));
        }
        if (parts.containsKey("attributes")) {
            b.attributes();
            for (Object a : (List<Object>) parts.get("attributes")) {
                List<Object> t = (List<Object>) a;
                b.attribute((String) t.get(0), (String) t.get(1), String.valueOf(t.get(2)));
            }
        }
        if (parts.containsKey("headers")) {
            b.headers();
            for (Map.Entry<String, Object> h : ((Map<String, Object>) parts.get("headers")).entrySet()) {
                if (h.getValue() instanceof List) {
                    b.header(h.getKey(), (List<String>) (List<?>) h.getValue());
                } else {
                    b.header(h.getKey(), (String) h.getValue());
                }
            }
        }
        return b.build();
    }

    static String outcome(Filter f, Function<Filter, Boolean> match) {
        try {
            return match.apply(f) ? "match" : "no-match";
        } catch (MessageException e) {
            return e.code();
        }
    }

    @SuppressWarnings("unchecked")
    @TestFactory
    Stream<DynamicTest> everySituationHasTheSameVerdictOrCode() throws Exception {
        List<Map<String, Object>> cases = Vectors.situations();
        assertTrue(cases.size() >= 30, "situations: " + cases.size());
        return cases.stream().map(c -> DynamicTest.dynamicTest(c.get("situation") + " " + c.get("dialect"), () -> {
            Object policy = c.get("policy");
            String policyText = policy instanceof String ? (String) policy : (String) c.get("policy_text");
            String expect = (String) c.get("expect");
            // Each form's outcome: the document of the parts has its own where the case gives
            // `parts_document_expect` (an eventbridge filter reads the whole document as the
            // event, EB-1).
            List<String> wants = new ArrayList<>();
            List<Function<Filter, Boolean>> forms = new ArrayList<>();
            List<Function<SubscriptionSet<String>, Matches<String>>> setForms = new ArrayList<>();
            List<Function<SubscriptionSet<String>, List<String>>> strictForms = new ArrayList<>();
            if (c.containsKey("parts")) {
                Message m = message((Map<String, Object>) c.get("parts"));
                String doc = (String) c.get("parts_document");
                wants.add(expect);
                forms.add(f -> f.matches(m));
                setForms.add(s -> s.matching(m));
                strictForms.add(s -> s.matchingStrict(m));
                wants.add(c.containsKey("parts_document_expect") ? (String) c.get("parts_document_expect") : expect);
                forms.add(f -> f.matches(doc));
                setForms.add(s -> s.matching(doc));
                strictForms.add(s -> s.matchingStrict(doc.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            } else {
                String doc = (String) c.get("document");
                wants.add(expect);
                forms.add(f -> f.matches(doc));
                setForms.add(s -> s.matching(doc));
                strictForms.add(s -> s.matchingStrict(doc.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            }
            try (Filter f = Filter.compile((String) c.get("dialect"), policyText, (String) c.get("options_text"));
                    Filter witness = Filter.compile("sns", "{}")) {
                for (int i = 0; i < forms.size(); i++) {
                    Function<Filter, Boolean> form = forms.get(i);
                    String want = wants.get(i);
                    assertEquals(want, outcome(f, form), "form " + i);
                    try (SubscriptionSet<String> s = new SubscriptionSet<>()) {
                        s.add("case", f);
                        s.add("witness", witness);
                        Matches<String> got = setForms.get(i).apply(s);
                        List<String> expected = new ArrayList<>();
                        if (outcome(f, form).equals("match")) {
                            expected.add("case");
                        }
                        if (outcome(witness, form).equals("match")) {
                            expected.add("witness");
                        }
                        assertEquals(expected, got.ids(), "form " + i);
                        Set<String> codes = new HashSet<>();
                        got.unjudged().forEach(g -> codes.add(g.code()));
                        boolean judged = want.equals("match") || want.equals("no-match");
                        assertEquals(!judged, codes.contains(want), "form " + i + " " + got.unjudged());
                        assertEquals(codes.isEmpty(), got.isComplete());
                        if (!judged) {
                            Function<SubscriptionSet<String>, List<String>> strict = strictForms.get(i);
                            MessageException e = assertThrows(MessageException.class, () -> strict.apply(s));
                            assertTrue(e.errors().stream().anyMatch(d -> d.code().equals(want)), e.toString());
                        }
                    }
                }
            }
        }));
    }
}
