package filtervm

// The one file that talks to C. The static library is the C ABI (capi/, header
// capi/include/filtervm.h) built by `cargo build --release -p filtervm-capi`: the #cgo directives
// below link libfiltervm_capi.a by its exact name (never the .so beside it) from the repository's
// target/release (bindings/go/ci.sh builds it); one built elsewhere (CARGO_TARGET_DIR) is found
// by adding its directory: CGO_LDFLAGS="-L$CARGO_TARGET_DIR/release" (README.md, "Go").
//
// cgo's pointer rules forbid handing C Go memory that holds Go pointers, and an fvm_message of
// parts is a struct of pointers to attribute and header arrays that point to byte strings. So
// the Go side copies a message's parts into one byte buffer and describes them by offsets, in
// the same buffer (no pointers in it); fvmgo_parts below builds the fvm_message, fvm_attribute and
// fvm_header values on the C stack from the buffer and the offsets, and makes the call. Nothing
// is allocated on the C heap for a message, and C keeps nothing after the call returns
// (fvm_message's contract), so the Go memory needs no pinning beyond the call.

/*
#cgo CFLAGS: -I${SRCDIR}/../../capi/include
#cgo LDFLAGS: -L${SRCDIR}/../../target/release -l:libfiltervm_capi.a -lpthread -ldl -lm
#include <stdlib.h>
#include <string.h>
#include "filtervm.h"

// The attribute type names a Go caller gives most, as static strings (the C ABI recognizes a
// type name it saw last by its pointer, so a repeated static name is the cheapest).
static const char *const fvmgo_types[4] = {"String", "Number", "Binary", "String.Array"};

// Attributes and headers built on the stack up to this count; above it, on the heap.
#define FVMGO_STACK 32
// fvmgo_parts could not allocate its attribute or header array (no FVM_ERR_* has this value).
#define FVMGO_NO_MEMORY (-100)

// Value `i` of a message's description (read byte-wise: no alignment is assumed).
static inline size_t fvmgo_at(const uint8_t *desc, size_t i) {
	size_t v;
	memcpy(&v, desc + i * sizeof v, sizeof v);
	return v;
}

// Matches a message of parts against a filter (when filter is not NULL) or a set, reading a
// JSON body in `read_mode` (FVM_READ_VALIDATING or FVM_READ_TRUSTED). `buf` holds
// every byte string of the message, then at `desc_off` their description, 64-bit values: body
// offset and length, then 6 per attribute (name offset, length, value offset, length, type kind
// 0-3 for fvmgo_types or 4 for a NUL-terminated name at the type offset, type offset), then 4
// per header value (name offset, length, value offset, length). One buffer, so cgo checks one
// pointer.
static int32_t fvmgo_parts(const fvm_filter *filter, const fvm_set *set, uint32_t parts,
                           uint32_t read_mode, const uint8_t *buf, size_t desc_off, size_t nattrs,
                           size_t nheaders, uint64_t *ids, size_t capacity, size_t *count, fvm_error **error) {
	const uint8_t *desc = buf + desc_off;
	fvm_attribute stack_attrs[FVMGO_STACK];
	fvm_header stack_headers[FVMGO_STACK];
	fvm_attribute *attrs = stack_attrs;
	fvm_header *headers = stack_headers;
	if (nattrs > FVMGO_STACK) {
		attrs = malloc(nattrs * sizeof(fvm_attribute));
	}
	if (nheaders > FVMGO_STACK) {
		headers = malloc(nheaders * sizeof(fvm_header));
	}
	if (attrs == NULL || headers == NULL) {
		if (attrs != stack_attrs) free(attrs);
		if (headers != stack_headers) free(headers);
		return FVMGO_NO_MEMORY;
	}
	size_t d = 2;
	for (size_t i = 0; i < nattrs; i++, d += 6) {
		attrs[i].name = buf + fvmgo_at(desc, d);
		attrs[i].name_len = fvmgo_at(desc, d + 1);
		attrs[i].value = buf + fvmgo_at(desc, d + 2);
		attrs[i].value_len = fvmgo_at(desc, d + 3);
		size_t kind = fvmgo_at(desc, d + 4);
		attrs[i].data_type = kind < 4 ? fvmgo_types[kind] : (const char *)(buf + fvmgo_at(desc, d + 5));
	}
	for (size_t i = 0; i < nheaders; i++, d += 4) {
		headers[i].name = buf + fvmgo_at(desc, d);
		headers[i].name_len = fvmgo_at(desc, d + 1);
		headers[i].value = buf + fvmgo_at(desc, d + 2);
		headers[i].value_len = fvmgo_at(desc, d + 3);
	}
	fvm_message m = {0};
	m.parts = parts;
	m.body = buf + fvmgo_at(desc, 0);
	m.body_len = fvmgo_at(desc, 1);
	m.attributes = attrs;
	m.attribute_count = nattrs;
	m.headers = headers;
	m.header_count = nheaders;
	int32_t status = filter != NULL
	                     ? fvm_filter_matches_read(filter, &m, read_mode, error)
	                     : fvm_set_matching_read(set, &m, read_mode, ids, capacity, count, error);
	if (attrs != stack_attrs) free(attrs);
	if (headers != stack_headers) free(headers);
	return status;
}

// fvm_filter_matches_read on one JSON document.
static int32_t fvmgo_filter_json(const fvm_filter *filter, const uint8_t *json, size_t json_len,
                                 uint32_t read_mode, fvm_error **error) {
	fvm_message m = {0};
	m.parts = FVM_PART_JSON;
	m.json = json;
	m.json_len = json_len;
	return fvm_filter_matches_read(filter, &m, read_mode, error);
}

// fvm_set_matching_read on one JSON document.
static int32_t fvmgo_set_json(const fvm_set *set, const uint8_t *json, size_t json_len,
                              uint32_t read_mode, uint64_t *ids, size_t capacity, size_t *count,
                              fvm_error **error) {
	fvm_message m = {0};
	m.parts = FVM_PART_JSON;
	m.json = json;
	m.json_len = json_len;
	return fvm_set_matching_read(set, &m, read_mode, ids, capacity, count, error);
}
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// The C ABI's statuses (capi/include/filtervm.h).
const (
	statusOK             = int32(C.FVM_OK)
	statusMatch          = int32(C.FVM_MATCH)
	statusPartial        = int32(C.FVM_PARTIAL)
	statusPolicy         = int32(C.FVM_ERR_POLICY)
	statusMessage        = int32(C.FVM_ERR_MESSAGE)
	statusLoad           = int32(C.FVM_ERR_LOAD)
	statusArgument       = int32(C.FVM_ERR_ARGUMENT)
	statusSet            = int32(C.FVM_ERR_SET)
	statusBufferTooSmall = int32(C.FVM_ERR_BUFFER_TOO_SMALL)
	statusPanic          = int32(C.FVM_ERR_PANIC)
	// fvmgo_parts could not allocate its attribute or header array.
	statusNoMemory = int32(C.FVMGO_NO_MEMORY)
)

// The C ABI's message part bits.
const (
	partJSON       = uint32(C.FVM_PART_JSON)
	partBody       = uint32(C.FVM_PART_BODY)
	partAttributes = uint32(C.FVM_PART_ATTRIBUTES)
	partHeaders    = uint32(C.FVM_PART_HEADERS)
)

// bytesArg is a byte string as a C pointer and length (NULL for an empty one: the C ABI accepts
// NULL with a length of 0). The pointer is Go memory, valid for the call it is passed to.
func bytesArg(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

// goString copies a C string of a known length.
func goString(p *C.char, n C.size_t) string {
	if p == nil {
		return ""
	}
	return C.GoStringN(p, C.int(n))
}

// takeError converts a C error object into the Go error of its status (and frees it). status
// is the call's status; err may be NULL (FVM_ERR_BUFFER_TOO_SMALL has none).
func takeError(status int32, err *C.fvm_error) error {
	if err == nil {
		if status == statusNoMemory {
			return &ArgumentError{errorList{[]ErrorDetail{{Code: "INVALID_ARGUMENT", Message: "out of memory for the message's attributes or headers"}}}}
		}
		return &InternalError{errorList{[]ErrorDetail{{Code: "PANIC", Message: "the C ABI returned a failure without an error object"}}}}
	}
	defer C.fvm_error_free(err)
	details := readDetails(err)
	list := errorList{details}
	switch int32(C.fvm_error_status(err)) {
	case statusPolicy:
		return &PolicyError{list}
	case statusMessage:
		return &MessageError{list}
	case statusLoad:
		return &LoadError{list}
	case statusArgument:
		return &ArgumentError{list}
	case statusSet:
		return &SetError{list}
	default:
		return &InternalError{list}
	}
}

func readDetails(err *C.fvm_error) []ErrorDetail {
	n := int(C.fvm_error_count(err))
	details := make([]ErrorDetail, n)
	for i := range details {
		idx := C.size_t(i)
		var plen, mlen C.size_t
		pointer := C.fvm_error_pointer(err, idx, &plen)
		message := C.fvm_error_message(err, idx, &mlen)
		details[i] = ErrorDetail{
			Code:    C.GoString(C.fvm_error_code(err, idx)),
			Pointer: goString(pointer, plen),
			Message: goString(message, mlen),
		}
	}
	return details
}

// takeUnjudged reads the groups of an FVM_PARTIAL error (and frees it).
func takeUnjudged(err *C.fvm_error) []Unjudged {
	if err == nil {
		return nil
	}
	defer C.fvm_error_free(err)
	details := readDetails(err)
	groups := make([]Unjudged, len(details))
	for i, d := range details {
		idx := C.size_t(i)
		var olen C.size_t
		options := C.fvm_error_options(err, idx, &olen)
		groups[i] = Unjudged{
			Dialect:       C.GoString(C.fvm_error_dialect(err, idx)),
			Options:       goString(options, olen),
			Subscriptions: int(C.fvm_error_subscriptions(err, idx)),
			Code:          d.Code,
			Pointer:       d.Pointer,
			Message:       d.Message,
		}
	}
	return groups
}

// Version is the C library's version ("0.1.0").
func Version() string {
	return C.GoString(C.fvm_version())
}

// size_t is 64 bits wide (the offsets of a message are []uint64): 64-bit platforms only.
var _ [unsafe.Sizeof(C.size_t(0)) - 8]struct{}
var _ [8 - unsafe.Sizeof(C.size_t(0))]struct{}

// callParts runs fvmgo_parts on an encoded message, reading its body in mode: against filter
// when it is not nil, else against set with the ids buffer; the count and error land in e (no
// allocation per call).
func callParts(filter *C.fvm_filter, set *C.fvm_set, e *encoded, mode ReadMode, ids []uint64) int32 {
	var idsPtr *C.uint64_t
	if len(ids) > 0 {
		idsPtr = (*C.uint64_t)(unsafe.Pointer(&ids[0]))
	}
	return int32(C.fvmgo_parts(filter, set, C.uint32_t(e.parts), C.uint32_t(mode),
		(*C.uint8_t)(unsafe.Pointer(&e.buf[0])), C.size_t(e.descOff), C.size_t(e.nattrs),
		C.size_t(e.nheaders), idsPtr, C.size_t(len(ids)), &e.out.count, &e.out.err))
}

// callFilterJSON runs fvm_filter_matches_read on one JSON document.
func callFilterJSON(filter *C.fvm_filter, json []byte, mode ReadMode, err **C.fvm_error) int32 {
	ptr, n := bytesArg(json)
	return int32(C.fvmgo_filter_json(filter, ptr, n, C.uint32_t(mode), err))
}

// callSetJSON runs fvm_set_matching_read on one JSON document, read in mode.
func callSetJSON(set *C.fvm_set, json []byte, mode ReadMode, ids []uint64, count *C.size_t, err **C.fvm_error) int32 {
	ptr, n := bytesArg(json)
	var idsPtr *C.uint64_t
	if len(ids) > 0 {
		idsPtr = (*C.uint64_t)(unsafe.Pointer(&ids[0]))
	}
	return int32(C.fvmgo_set_json(set, ptr, n, C.uint32_t(mode), idsPtr, C.size_t(len(ids)), count, err))
}

// ReadEvents returns the events of one JSON document as Event Grid delivers them: for an array
// of events (a batch, a CloudEvents batch) each event's bytes (sub-slices of document), for any
// other document the whole of it. A filter judges one event (a batch given whole is
// INVALID_MESSAGE): match each as the Body. Bytes that are not JSON are a *MessageError
// (MESSAGE_NOT_JSON).
func ReadEvents(document []byte) ([][]byte, error) {
	ptr, n := bytesArg(document)
	spans := make([]C.fvm_span, 16)
	for {
		var count C.size_t
		var cerr *C.fvm_error
		status := int32(C.fvm_read_events(ptr, n, &spans[0], C.size_t(len(spans)), &count, &cerr))
		if status == statusBufferTooSmall {
			spans = make([]C.fvm_span, int(count))
			continue
		}
		runtime.KeepAlive(document)
		if status != statusOK {
			return nil, takeError(status, cerr)
		}
		events := make([][]byte, int(count))
		for i := range events {
			s := spans[i]
			events[i] = document[int(s.offset):int(s.offset+s.len):int(s.offset+s.len)]
		}
		return events, nil
	}
}
