package dev.filtervm;

/**
 * One error: a stable code ({@code SNS_SYNTAX_ERROR}, {@code INVALID_MESSAGE}, ...; the same in
 * every binding), a JSON Pointer into the policy or the message ({@code ""} for the whole of it)
 * and a message a person can act on.
 */
public record ErrorDetail(String code, String pointer, String message) {
    @Override
    public String toString() {
        return pointer.isEmpty() ? code + ": " + message : code + " at " + pointer + ": " + message;
    }
}
