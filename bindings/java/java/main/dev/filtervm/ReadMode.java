package dev.filtervm;

/**
 * How a JSON document or body is read: {@link Filter#matches(byte[], ReadMode)} and
 * {@link SubscriptionSet#matching(byte[], ReadMode)} (and their overloads) take one; the calls
 * without it read {@link #VALIDATING}. A null mode is a {@link FiltervmException} with code
 * {@code INVALID_ARGUMENT}.
 */
public enum ReadMode {
    /**
     * Every byte of a JSON document or body is checked against RFC 8259, the members no filter
     * reads included: a message that is not JSON is a {@link MessageException}
     * ({@code MESSAGE_NOT_JSON}), or in SNS its own verdict. The default.
     */
    VALIDATING(0),
    /**
     * For messages validated upstream (a broker that parsed them at publish time, an archive a
     * JSON encoder wrote): members no filter reads are skipped by their structure alone,
     * unchecked. What a filter reads is checked as always, and on valid JSON the verdicts and
     * errors are {@link #VALIDATING}'s; a message whose only faults are in the skipped members
     * (an invalid literal, bytes not UTF-8) may get a verdict instead of
     * {@code MESSAGE_NOT_JSON} (README.md, "Trusted input").
     */
    TRUSTED(1);

    /** The native side's number for the mode. */
    final int code;

    ReadMode(int code) {
        this.code = code;
    }

    /** The native number of {@code mode}: -1 for null, which the native side refuses. */
    static int codeOf(ReadMode mode) {
        return mode == null ? -1 : mode.code;
    }
}
