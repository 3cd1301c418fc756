package dev.filtervm;

/**
 * A group of subscriptions (one dialect and options value) that could not judge a message: its
 * subscriptions are in no result, and the caller is told why — the other groups still deliver.
 *
 * @param dialect the group's dialect ({@code stream}, ...)
 * @param options the group's options as JSON text, every option written out
 * @param subscriptions the number of its subscriptions
 * @param code the stable code of why ({@code MESSAGE_SHAPE}, {@code INVALID_MESSAGE}, ...)
 * @param pointer a JSON Pointer into the message
 * @param message what is wrong
 */
public record Unjudged(
        String dialect, String options, int subscriptions, String code, String pointer, String message) {}
