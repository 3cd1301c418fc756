package filtervm

// #include "filtervm.h"
import "C"

import "strconv"

// ReadMode is how a JSON document or body is read: MatchesRead, MatchesMessageRead,
// MatchingRead, MatchingMessageRead and MatchesForEventRead take one; the calls without it read
// in ReadValidating.
type ReadMode uint32

const (
	// ReadValidating checks every byte of a JSON document or body against RFC 8259, the members
	// no filter reads included: a message that is not JSON is a *MessageError (MESSAGE_NOT_JSON),
	// or in SNS its own verdict. The default.
	ReadValidating ReadMode = C.FVM_READ_VALIDATING
	// ReadTrusted is for messages validated upstream (a broker that parsed them at publish time,
	// an archive a JSON encoder wrote): members no filter reads are skipped by their structure
	// alone, unchecked. What a filter reads is checked as always, and on valid JSON the verdicts
	// and errors are ReadValidating's; a message whose only faults are in the skipped members
	// (an invalid literal, bytes not UTF-8) may get a verdict instead of MESSAGE_NOT_JSON
	// (README.md, "Trusted input"). Any other ReadMode value is an *ArgumentError.
	ReadTrusted ReadMode = C.FVM_READ_TRUSTED
)

// String is "validating", "trusted", or "ReadMode(N)" for any other value.
func (m ReadMode) String() string {
	switch m {
	case ReadValidating:
		return "validating"
	case ReadTrusted:
		return "trusted"
	}
	return "ReadMode(" + strconv.FormatUint(uint64(m), 10) + ")"
}
