package dev.filtervm;

import java.util.List;

/** A message that could not be read or judged (a missing part, JSON that is not JSON, a message too deep), or with {@code SubscriptionSet.matchingStrict} a message some group of subscriptions could not judge: one error per such group. */
public class MessageException extends FiltervmException {
    private static final long serialVersionUID = 1L;

    MessageException(List<ErrorDetail> errors) {
        super(errors);
    }
}
