package dev.filtervm;

import java.nio.charset.StandardCharsets;

/**
 * event-ruler's {@code software.amazon.event.ruler.Ruler}: one event against one EventBridge
 * pattern, without a {@link Machine}.
 */
public final class Ruler {
    private Ruler() {}

    /**
     * Whether {@code event} matches {@code rule}, an EventBridge event pattern (compiled for this
     * call: keep a {@link Filter} or a {@link Machine} to match many events).
     *
     * @throws InvalidPatternException with every error of a pattern that does not compile
     * @throws MessageException when the event is not JSON or not a JSON object
     */
    public static boolean matchesRule(String event, String rule) throws Exception {
        try (Filter f = Machine.compile(rule)) {
            return f.matches(event.getBytes(StandardCharsets.UTF_8));
        }
    }
}
