package dev.filtervm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * An error of filtervm, with every detail: {@link #errors()} (at least one), each a stable code,
 * a JSON Pointer and a message. The subclasses say what it is about: {@link PolicyException} (the
 * policy or its options), {@link MessageException} (a message that cannot be read or judged),
 * {@link LoadException} (bytes that are not a filter). A {@code FiltervmException} itself is an
 * argument of the binding ({@code INVALID_ARGUMENT}), a full set ({@code SET_FULL}) or a bug in
 * filtervm caught at the native boundary ({@code PANIC}).
 */
public class FiltervmException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final List<ErrorDetail> errors;

    FiltervmException(List<ErrorDetail> errors) {
        super(text(errors));
        this.errors = Collections.unmodifiableList(new ArrayList<>(errors));
    }

    /** Every error (at least one). */
    public List<ErrorDetail> errors() {
        return errors;
    }

    /** The first error's code. */
    public String code() {
        return errors.isEmpty() ? "" : errors.get(0).code();
    }

    /** The first error's JSON Pointer. */
    public String pointer() {
        return errors.isEmpty() ? "" : errors.get(0).pointer();
    }

    private static String text(List<ErrorDetail> errors) {
        StringBuilder out = new StringBuilder();
        for (ErrorDetail e : errors) {
            if (out.length() > 0) {
                out.append("; ");
            }
            out.append(e);
        }
        return out.toString();
    }

    /** Called by the native library: {@code details} holds code, pointer, message per error. */
    static FiltervmException fromNative(String kind, String[] details) {
        List<ErrorDetail> errors = new ArrayList<>();
        for (int i = 0; i + 2 < details.length; i += 3) {
            errors.add(new ErrorDetail(details[i], details[i + 1], details[i + 2]));
        }
        switch (kind) {
            case "policy":
                return new PolicyException(errors);
            case "message":
                return new MessageException(errors);
            case "load":
                return new LoadException(errors);
            default:
                return new FiltervmException(errors);
        }
    }
}
