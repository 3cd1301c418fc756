package dev.filtervm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Rules of EventBridge event patterns, matched against JSON events: the calls of event-ruler's
 * {@code software.amazon.event.ruler.Machine}, over filtervm's {@code eventbridge} dialect
 * ({@code docs/dialects/eventbridge-patterns.md}; {@code rulesForJSONEvent} is event-ruler's
 * array-consistent matching, EB-11).
 *
 * <p>A rule name may be given several patterns (one {@code addRule} each): the rule matches when
 * any of them does. Thread-safe: any number of threads match while another adds and deletes.
 * Native memory is released by {@link #close()} (event-ruler's Machine has none: a machine never
 * closed is released by a {@link java.lang.ref.Cleaner} once unreachable).
 *
 * <pre>{@code
 * Machine machine = new Machine();
 * machine.addRule("terminated", "{\"detail\": {\"state\": [\"terminated\"]}}");
 * machine.rulesForJSONEvent("{\"detail\": {\"state\": \"terminated\"}}"); // [terminated]
 * }</pre>
 */
public class Machine implements AutoCloseable {
    /** The dialect of the patterns. */
    static final String DIALECT = "eventbridge";

    /** One pattern of one rule: the rule's name and the pattern's compiled form (its identity). */
    private record Rule(String name, String pattern) {}

    private final SubscriptionSet<Rule> rules = new SubscriptionSet<>();

    /** An empty machine. */
    public Machine() {}

    /** Compiles an event pattern, throwing what event-ruler throws for a bad one: an IOException. */
    static Filter compile(String pattern) throws InvalidPatternException {
        try {
            return Filter.compile(DIALECT, pattern, null);
        } catch (PolicyException e) {
            throw new InvalidPatternException(e);
        }
    }

    /** A pattern's identity: its compiled form, so that spacing does not make two patterns. */
    private static String identity(Filter f) {
        return Base64.getEncoder().encodeToString(f.toBytes());
    }

    /**
     * Adds {@code pattern} to rule {@code name} (a rule with several patterns matches when any
     * does; the same pattern added twice is one).
     *
     * @throws InvalidPatternException with every error of a pattern that does not compile
     */
    public void addRule(String name, String pattern) throws IOException {
        try (Filter f = compile(pattern)) {
            rules.add(new Rule(name, identity(f)), f);
        }
    }

    /**
     * Deletes {@code pattern} from rule {@code name}: the pattern given to {@link #addRule} (the
     * same pattern, however it is spaced); a pattern the rule does not have is ignored, as in
     * event-ruler. Unlike event-ruler, a pattern is deleted whole: deleting {@code {"a": [1]}}
     * does not narrow a rule added as {@code {"a": [1, 2]}}.
     *
     * @throws InvalidPatternException with every error of a pattern that does not compile
     */
    public void deleteRule(String name, String pattern) throws IOException {
        try (Filter f = compile(pattern)) {
            rules.remove(new Rule(name, identity(f)));
        }
    }

    /**
     * The names of the rules that match the event (each once, in the order the rules were first
     * added), with event-ruler's array-consistent matching.
     *
     * @throws MessageException when the event is not JSON or not a JSON object (event-ruler
     *     throws Jackson's exception for the former); declared as {@code Exception}, as
     *     event-ruler declares it, so that code written for event-ruler compiles unchanged
     */
    public List<String> rulesForJSONEvent(String event) throws Exception {
        List<Rule> matched = rules.matchingStrict(event.getBytes(StandardCharsets.UTF_8));
        Set<String> names = new LinkedHashSet<>();
        for (Rule r : matched) {
            names.add(r.name());
        }
        return new ArrayList<>(names);
    }

    /** Whether the machine holds no rule. */
    public boolean isEmpty() {
        return rules.size() == 0;
    }

    /** Releases the native rules (idempotent). */
    @Override
    public void close() {
        rules.close();
    }
}
