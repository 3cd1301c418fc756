package dev.filtervm;

import java.io.IOException;
import java.util.List;

/**
 * An event pattern that {@link Machine#addRule} or {@link Ruler#matchesRule} cannot compile: an
 * {@link IOException} as event-ruler's are (its {@code addRule} throws Jackson's), with every
 * error of the pattern (code, JSON Pointer, message) in {@link #errors()} and the
 * {@link PolicyException} as its cause.
 */
public class InvalidPatternException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient PolicyException policy;

    InvalidPatternException(PolicyException cause) {
        super(cause.getMessage(), cause);
        this.policy = cause;
    }

    /** Every error of the pattern. */
    public List<ErrorDetail> errors() {
        return policy.errors();
    }

    /** The first error's code ({@code EVENTBRIDGE_...}). */
    public String code() {
        return policy.code();
    }
}
