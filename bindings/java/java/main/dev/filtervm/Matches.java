package dev.filtervm;

import java.util.List;

/**
 * What a {@link SubscriptionSet} found for one message: the ids of the subscriptions that match
 * (in the order they were first added) and each group of subscriptions that could not judge the
 * message (their subscriptions are in no result; one group that cannot read a message never
 * keeps the others from judging it).
 *
 * @param ids the ids of the subscriptions that match
 * @param unjudged the groups that could not judge the message (empty when every group did)
 * @param <T> the id type
 */
public record Matches<T>(List<T> ids, List<Unjudged> unjudged) {
    /** Whether every group judged the message. */
    public boolean isComplete() {
        return unjudged.isEmpty();
    }

    /** Whether subscription {@code id} matches. */
    public boolean contains(T id) {
        return ids.contains(id);
    }
}
