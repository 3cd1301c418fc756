package filtervm

import (
	"errors"
	"strconv"
	"strings"
)

// ErrorDetail is one problem: a stable code, a JSON Pointer into the policy or message, and a
// message a person can act on. The codes are the library's, the same through Rust, C, Python
// and Go for the same situation (e.g. "SNS_TYPE_ERROR", "MESSAGE_SHAPE", "INVALID_MESSAGE").
type ErrorDetail struct {
	// Code is the stable code, e.g. "SNS_TYPE_ERROR" or "INVALID_MESSAGE".
	Code string
	// Pointer is a JSON Pointer ("" is the whole policy or message; for the stream text form
	// a byte span "bytes A..B").
	Pointer string
	// Message says what is wrong.
	Message string
}

func (d ErrorDetail) String() string {
	if d.Pointer == "" {
		return d.Code + ": " + d.Message
	}
	return d.Code + " at " + d.Pointer + ": " + d.Message
}

// errorList is what every error type of this package holds: at least one detail.
type errorList struct {
	// Errors lists every problem found (at least one; a policy error lists them all).
	Errors []ErrorDetail
}

// Code is the first detail's code.
func (e *errorList) Code() string {
	if len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].Code
}

// Pointer is the first detail's JSON Pointer.
func (e *errorList) Pointer() string {
	if len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].Pointer
}

func (e *errorList) text(what string) string {
	parts := make([]string, len(e.Errors))
	for i, d := range e.Errors {
		parts[i] = d.String()
	}
	return "filtervm: " + what + ": " + strings.Join(parts, "; ")
}

// PolicyError reports an invalid policy or options (Compile, Set.AddPattern): Errors lists every
// problem, each with its code, JSON Pointer and message.
type PolicyError struct{ errorList }

func (e *PolicyError) Error() string { return e.text("invalid policy") }

// MessageError reports a message a filter cannot judge: not JSON, not in the dialect's shape,
// without the part the filter reads (MESSAGE_SHAPE), or too complex (MESSAGE_TOO_COMPLEX).
type MessageError struct{ errorList }

func (e *MessageError) Error() string { return e.text("message cannot be judged") }

// LoadError reports bytes given to FromBytes that are not a filter.
type LoadError struct{ errorList }

func (e *LoadError) Error() string { return e.text("not a filter") }

// ArgumentError reports an invalid argument (code INVALID_ARGUMENT): an unknown dialect name, a
// message that names no part, a header without a value, a closed Filter or Set.
type ArgumentError struct{ errorList }

func (e *ArgumentError) Error() string { return e.text("invalid argument") }

// SetError reports a set that cannot take another filter (code SET_FULL).
type SetError struct{ errorList }

func (e *SetError) Error() string { return e.text("set") }

// InternalError reports a bug in filtervm caught at the C boundary (code PANIC). A Set that
// reports it should be closed.
type InternalError struct{ errorList }

func (e *InternalError) Error() string { return e.text("internal error") }

// Unjudged is a group of subscriptions of a Set (one dialect and options value) that could not
// judge a message: its subscriptions are in no result. Deliver the others, and report or retry
// these.
type Unjudged struct {
	// Dialect is the group's dialect, e.g. "stream".
	Dialect string
	// Options is the group's options as JSON text, every option written out ("{}" for a
	// dialect without options).
	Options string
	// Subscriptions is the number of the group's subscriptions (none of them was judged).
	Subscriptions int
	// Code, Pointer and Message say why, as a MessageError would.
	Code, Pointer, Message string
}

// UnjudgedError is returned by Set.MatchesForEvent beside the matches of every group that could
// judge the event when some groups could not: deliver the matches it returned, then report or
// retry these groups.
type UnjudgedError struct {
	// Groups lists each group that could not judge the event.
	Groups []Unjudged
}

func (e *UnjudgedError) Error() string {
	parts := make([]string, len(e.Groups))
	for i, g := range e.Groups {
		parts[i] = g.Dialect + " " + g.Options + " (" + strconv.Itoa(g.Subscriptions) + " subscriptions): " + g.Code + ": " + g.Message
	}
	return "filtervm: some subscriptions could not judge the event (the others' matches were returned): " + strings.Join(parts, "; ")
}

// errClosed is the error of a call on a closed Filter or Set.
func errClosed(what string) error {
	return &ArgumentError{errorList{[]ErrorDetail{{Code: "INVALID_ARGUMENT", Message: "the " + what + " is closed"}}}}
}

func argumentError(message string) error {
	return &ArgumentError{errorList{[]ErrorDetail{{Code: "INVALID_ARGUMENT", Message: message}}}}
}

// Code returns the stable code of err's first detail when err is (or wraps) an error of this
// package, else "".
func Code(err error) string {
	var c interface{ Code() string }
	if errors.As(err, &c) {
		return c.Code()
	}
	return ""
}
