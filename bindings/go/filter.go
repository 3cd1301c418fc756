package filtervm

// #include <stdlib.h>
// #include "filtervm.h"
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Filter is a compiled subscription filter. It is safe for concurrent use: any number of
// goroutines may match with one Filter at once. Its native memory is released by Close (or, as a
// safety net, when the garbage collector finds it unreachable).
type Filter struct {
	// mu guards ptr: matching holds it for reading, Close for writing, so a Close racing a
	// match waits for it instead of freeing the filter under it.
	mu  sync.RWMutex
	ptr *C.fvm_filter
}

// Compile compiles a policy of a dialect: "sns", "basaltic", "eventgrid", "stream", "expr" or
// "eventbridge". policy is JSON text (for stream also the text form
// `region = eu-* and n > 5`); options is the dialect's options as JSON text
// (`{"scope": "MessageBody"}`), or "" for the defaults. An invalid policy or options is a
// *PolicyError listing every problem; an unknown dialect an *ArgumentError.
func Compile(dialect, policy, options string) (*Filter, error) {
	cDialect := C.CString(dialect)
	defer C.free(unsafe.Pointer(cDialect))
	policyBytes := []byte(policy)
	policyPtr, policyLen := bytesArg(policyBytes)
	var optionsPtr *C.uint8_t
	var optionsLen C.size_t
	if options != "" {
		optionsBytes := []byte(options)
		optionsPtr, optionsLen = bytesArg(optionsBytes)
		defer runtime.KeepAlive(optionsBytes)
	}
	var out *C.fvm_filter
	var cerr *C.fvm_error
	status := int32(C.fvm_compile(cDialect, policyPtr, policyLen, optionsPtr, optionsLen, &out, &cerr))
	runtime.KeepAlive(policyBytes)
	if status != statusOK {
		return nil, takeError(status, cerr)
	}
	return newFilter(out), nil
}

// FromBytes loads a filter encoded by ToBytes (program, dialect, options). Any bytes may be
// given: the program is verified, and bytes that are not a filter are a *LoadError.
func FromBytes(b []byte) (*Filter, error) {
	ptr, n := bytesArg(b)
	var out *C.fvm_filter
	var cerr *C.fvm_error
	status := int32(C.fvm_filter_from_bytes(ptr, n, &out, &cerr))
	runtime.KeepAlive(b)
	if status != statusOK {
		return nil, takeError(status, cerr)
	}
	return newFilter(out), nil
}

// liveFilters and liveSets count the native filters and sets not yet freed (the tests check that
// Close and the finalizers free every one).
var liveFilters, liveSets atomic.Int64

func newFilter(ptr *C.fvm_filter) *Filter {
	liveFilters.Add(1)
	f := &Filter{ptr: ptr}
	runtime.SetFinalizer(f, (*Filter).Close)
	return f
}

// Close releases the filter's native memory. Sets the filter was added to keep their own copy.
// Closing twice is harmless; any other call on a closed filter is an *ArgumentError.
func (f *Filter) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ptr != nil {
		C.fvm_filter_free(f.ptr)
		f.ptr = nil
		liveFilters.Add(-1)
		runtime.SetFinalizer(f, nil)
	}
	return nil
}

// Dialect is the filter's dialect name ("" once closed).
func (f *Filter) Dialect() string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return ""
	}
	return C.GoString(C.fvm_filter_dialect(f.ptr))
}

// Matches reports whether a message given as one JSON document matches: the parts shape
// {"attributes", "headers", "body"}, the AWS SNS Publish and notification shapes, or any other
// document as the body itself (an Event Grid or EventBridge event). A message the filter cannot
// judge is a *MessageError (never a quiet false).
func (f *Filter) Matches(event []byte) (bool, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return false, errClosed("filter")
	}
	ptr, n := bytesArg(event)
	var cerr *C.fvm_error
	status := int32(C.fvm_filter_matches_json(f.ptr, ptr, n, &cerr))
	runtime.KeepAlive(event)
	return verdict(status, cerr)
}

// MatchesRead is Matches, reading the document in mode: ReadTrusted skips the members no
// filter reads by their structure alone, for input validated upstream (see ReadMode). A mode
// other than ReadValidating and ReadTrusted is an *ArgumentError.
func (f *Filter) MatchesRead(event []byte, mode ReadMode) (bool, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return false, errClosed("filter")
	}
	var cerr *C.fvm_error
	status := callFilterJSON(f.ptr, event, mode, &cerr)
	runtime.KeepAlive(event)
	return verdict(status, cerr)
}

// MatchesMessage reports whether a message given as its parts matches (see Message for which
// part each dialect reads). A message the filter cannot judge is a *MessageError.
func (f *Filter) MatchesMessage(m Message) (bool, error) {
	return f.MatchesMessageRead(m, ReadValidating)
}

// MatchesMessageRead is MatchesMessage, reading a JSON body in mode (see ReadMode; a mode other
// than ReadValidating and ReadTrusted is an *ArgumentError).
func (f *Filter) MatchesMessageRead(m Message, mode ReadMode) (bool, error) {
	e, err := encode(&m)
	if err != nil {
		return false, err
	}
	defer e.release()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return false, errClosed("filter")
	}
	status := callParts(f.ptr, nil, e, mode, nil)
	cerr := e.out.err
	e.out.err = nil
	return verdict(status, cerr)
}

func verdict(status int32, cerr *C.fvm_error) (bool, error) {
	switch status {
	case statusMatch:
		return true, nil
	case statusOK:
		return false, nil
	default:
		return false, takeError(status, cerr)
	}
}

// ToBytes encodes the filter (program, dialect, options) for FromBytes.
func (f *Filter) ToBytes() ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return nil, errClosed("filter")
	}
	var out *C.uint8_t
	var n C.size_t
	var cerr *C.fvm_error
	status := int32(C.fvm_filter_to_bytes(f.ptr, &out, &n, &cerr))
	if status != statusOK {
		return nil, takeError(status, cerr)
	}
	defer C.fvm_bytes_free(out, n)
	return C.GoBytes(unsafe.Pointer(out), C.int(n)), nil
}
