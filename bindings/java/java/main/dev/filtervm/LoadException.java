package dev.filtervm;

import java.util.List;

/** Bytes that are not a filter ({@link Filter#fromBytes}), or a loaded filter asked for what it does not carry. */
public class LoadException extends FiltervmException {
    private static final long serialVersionUID = 1L;

    LoadException(List<ErrorDetail> errors) {
        super(errors);
    }
}
