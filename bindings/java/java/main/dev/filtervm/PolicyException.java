package dev.filtervm;

import java.util.List;

/** The policy or its options are invalid: every error of the policy is in {@link #errors()}. */
public class PolicyException extends FiltervmException {
    private static final long serialVersionUID = 1L;

    PolicyException(List<ErrorDetail> errors) {
        super(errors);
    }
}
