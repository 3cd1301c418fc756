package filtervm

// #include "filtervm.h"
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Set is a set of subscriptions shaped like quamina's Quamina type: each subscription is a
// caller's label X with one or more patterns or filters (AddPattern, AddFilter); MatchesForEvent
// returns the labels whose patterns match an event. Unlike quamina, the filters of one Set may be
// of any dialects and options at once, and a group of them that cannot read a message (an
// EventBridge pattern given a message that is not JSON, a stream filter given no headers) never
// costs the other subscribers their match: see Matching and UnjudgedError.
//
// Concurrency: as in quamina, Copy returns another handle on the same subscriptions, and copies
// may be used in different goroutines for any mix of MatchesForEvent, AddPattern, AddFilter and
// DeletePatterns (a change made through one is seen by all; changes wait for matches in progress
// and are serialized). Unlike quamina, one handle is also safe for concurrent use; a copy per
// goroutine spares the goroutines from sharing one result buffer. README.md ("Go") compares the
// two side by side.
//
// Native memory: Close releases a handle; the subscriptions' native memory is released when the
// last open handle is closed (or, as a safety net, when the garbage collector finds every handle
// unreachable).
type Set[X comparable] struct {
	core *setCore[X]
	// closed is set once by Close.
	closed atomic.Bool
	// mu guards ids, this handle's result buffer (a match that finds it busy uses a fresh one).
	mu  sync.Mutex
	ids []uint64
}

// setCore is what the copies of a Set share: the C set and the labels of its ids.
type setCore[X comparable] struct {
	// mu is held for reading by matches, for writing by changes and the final Close.
	mu  sync.RWMutex
	ptr *C.fvm_set
	// refs counts the open handles.
	refs int
	// label is the label of each C id in the set (indexed by id: matching turns ids into labels
	// without hashing); free holds the ids removed, reused by the next additions (the C set
	// orders ids by insertion, so a reused id goes last, as a new one would), so label grows
	// only to the most subscriptions ever held at once. ids maps each label to its C ids (one per
	// pattern or filter added for it).
	label []X
	free  []uint64
	ids   map[X][]uint64
	// shared counts the labels with more than one id: only then may a result name a label twice.
	shared int
}

// Result is what Matching returns: the labels whose filters match, and each group of
// subscriptions that could not judge the message (in no result: report or retry them).
type Result[X comparable] struct {
	// Matches lists each matching label once, in the order the labels' first matching
	// pattern or filter was added.
	Matches []X
	// Unjudged lists each group that could not judge the message (empty when all did).
	Unjudged []Unjudged
}

// Complete reports whether every subscription judged the message.
func (r Result[X]) Complete() bool { return len(r.Unjudged) == 0 }

// New returns an empty Set whose subscriptions are labelled by values of X (quamina's New).
func New[X comparable]() (*Set[X], error) {
	ptr := C.fvm_set_new()
	if ptr == nil {
		return nil, &InternalError{errorList{[]ErrorDetail{{Code: "PANIC", Message: "fvm_set_new failed"}}}}
	}
	liveSets.Add(1)
	core := &setCore[X]{ptr: ptr, refs: 1, ids: map[X][]uint64{}}
	return newHandle(core), nil
}

func newHandle[X comparable](core *setCore[X]) *Set[X] {
	s := &Set[X]{core: core, ids: make([]uint64, 64)}
	runtime.SetFinalizer(s, (*Set[X]).Close)
	return s
}

// Copy returns another handle on the same subscriptions, for use in another goroutine
// (quamina's Copy). Close each handle when done; Copy of a closed handle returns a closed one.
func (s *Set[X]) Copy() *Set[X] {
	c := s.core
	c.mu.Lock()
	defer c.mu.Unlock()
	h := newHandle(c)
	if s.closed.Load() || c.ptr == nil {
		h.closed.Store(true)
		runtime.SetFinalizer(h, nil)
	} else {
		c.refs++
	}
	return h
}

// Close releases this handle; the subscriptions' native memory goes with the last open handle.
// Closing twice is harmless; any other call on a closed handle is an *ArgumentError.
func (s *Set[X]) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	runtime.SetFinalizer(s, nil)
	c := s.core
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refs--
	if c.refs == 0 && c.ptr != nil {
		C.fvm_set_free(c.ptr)
		c.ptr = nil
		liveSets.Add(-1)
		c.label, c.free, c.ids = nil, nil, nil
	}
	return nil
}

// AddPattern adds an EventBridge pattern (the eventbridge dialect; quamina's pattern language
// is EventBridge's) for label x. A label may have several patterns and filters: it matches when
// any of them does. An invalid pattern is a *PolicyError listing every problem.
func (s *Set[X]) AddPattern(x X, pattern string) error {
	f, err := Compile("eventbridge", pattern, "")
	if err != nil {
		return err
	}
	defer f.Close()
	return s.AddFilter(x, f)
}

// AddFilter adds a compiled filter of any dialect for label x (the set keeps its own copy: f may
// be closed afterwards).
func (s *Set[X]) AddFilter(x X, f *Filter) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return errClosed("filter")
	}
	c := s.core
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.closed.Load() || c.ptr == nil {
		return errClosed("set")
	}
	id := uint64(len(c.label))
	if n := len(c.free); n > 0 {
		id = c.free[n-1]
	}
	var cerr *C.fvm_error
	status := int32(C.fvm_set_add(c.ptr, C.uint64_t(id), f.ptr, &cerr))
	if status != statusOK {
		return takeError(status, cerr)
	}
	if n := len(c.free); n > 0 {
		c.free = c.free[:n-1]
		c.label[id] = x
	} else {
		c.label = append(c.label, x)
	}
	if len(c.ids[x]) == 1 {
		c.shared++
	}
	c.ids[x] = append(c.ids[x], id)
	return nil
}

// DeletePatterns removes every pattern and filter of label x (quamina's DeletePatterns; a label
// that has none is not an error).
func (s *Set[X]) DeletePatterns(x X) error {
	c := s.core
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.closed.Load() || c.ptr == nil {
		return errClosed("set")
	}
	ids := c.ids[x]
	for i, id := range ids {
		var cerr *C.fvm_error
		status := int32(C.fvm_set_remove(c.ptr, C.uint64_t(id), &cerr))
		if status < 0 {
			// Keep the labels of the ids still in the C set.
			c.ids[x] = ids[i:]
			return takeError(status, cerr)
		}
		var zero X
		c.label[id] = zero // drop the reference for the collector
		c.free = append(c.free, id)
	}
	if len(ids) > 1 {
		c.shared--
	}
	delete(c.ids, x)
	return nil
}

// Len is the number of labels with at least one pattern or filter.
func (s *Set[X]) Len() int {
	c := s.core
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.ids)
}

// MatchesForEvent returns the labels whose patterns or filters match an event given as one JSON
// document (quamina's MatchesForEvent; see Filter.Matches for the document shapes), each once.
// When some groups of subscriptions cannot judge the event, it returns the matches of all the
// others AND an *UnjudgedError listing those groups: deliver the matches, then report or retry.
// Other errors (a closed set) return no matches.
func (s *Set[X]) MatchesForEvent(event []byte) ([]X, error) {
	return s.MatchesForEventRead(event, ReadValidating)
}

// MatchesForEventRead is MatchesForEvent, reading the event in mode (see ReadMode; a mode other
// than ReadValidating and ReadTrusted is an *ArgumentError).
func (s *Set[X]) MatchesForEventRead(event []byte, mode ReadMode) ([]X, error) {
	r, err := s.MatchingRead(event, mode)
	if err != nil {
		return nil, err
	}
	if len(r.Unjudged) > 0 {
		return r.Matches, &UnjudgedError{Groups: r.Unjudged}
	}
	return r.Matches, nil
}

// Matching returns the labels whose patterns or filters match an event given as one JSON
// document, and each group of subscriptions that could not judge it: one group's subscribers
// never lose a message because another cannot read it.
func (s *Set[X]) Matching(event []byte) (Result[X], error) {
	return s.MatchingRead(event, ReadValidating)
}

// MatchingRead is Matching, reading the event in mode: ReadTrusted skips the members no filter
// reads by their structure alone, for input validated upstream (see ReadMode). A mode other
// than ReadValidating and ReadTrusted is an *ArgumentError.
func (s *Set[X]) MatchingRead(event []byte, mode ReadMode) (Result[X], error) {
	e := newEncoded()
	defer e.release()
	return s.matching(e, func(ids []uint64) int32 {
		status := callSetJSON(s.core.ptr, event, mode, ids, &e.out.count, &e.out.err)
		runtime.KeepAlive(event)
		return status
	})
}

// MatchingMessage is Matching for a message given as its parts (see Message for which part
// each dialect reads).
func (s *Set[X]) MatchingMessage(m Message) (Result[X], error) {
	return s.MatchingMessageRead(m, ReadValidating)
}

// MatchingMessageRead is MatchingMessage, reading a JSON body in mode (see ReadMode; a mode
// other than ReadValidating and ReadTrusted is an *ArgumentError).
func (s *Set[X]) MatchingMessageRead(m Message, mode ReadMode) (Result[X], error) {
	e, err := encode(&m)
	if err != nil {
		return Result[X]{}, err
	}
	defer e.release()
	return s.matching(e, func(ids []uint64) int32 {
		return callParts(nil, s.core.ptr, e, mode, ids)
	})
}

// matching runs call (fvm_set_matching on some message, its count and error in e) with this
// handle's result buffer, growing it when it is too small, and turns the ids into labels.
func (s *Set[X]) matching(e *encoded, call func(ids []uint64) int32) (Result[X], error) {
	var ids []uint64
	mine := s.mu.TryLock()
	if mine {
		defer s.mu.Unlock()
		ids = s.ids
	} else {
		ids = make([]uint64, 64)
	}
	c := s.core
	c.mu.RLock()
	defer c.mu.RUnlock()
	if s.closed.Load() || c.ptr == nil {
		return Result[X]{}, errClosed("set")
	}
	status := call(ids)
	for status == statusBufferTooSmall {
		// The set cannot change while the read lock is held: the second call fits.
		ids = make([]uint64, int(e.out.count)+int(e.out.count)/4)
		if mine {
			s.ids = ids
		}
		status = call(ids)
	}
	count, cerr := e.out.count, e.out.err
	e.out.err = nil
	var r Result[X]
	switch status {
	case statusOK:
	case statusPartial:
		r.Unjudged = takeUnjudged(cerr)
	default:
		return Result[X]{}, takeError(status, cerr)
	}
	n := int(count)
	if n == 0 {
		return r, nil
	}
	r.Matches = make([]X, 0, n)
	if c.shared == 0 {
		for _, id := range ids[:n] {
			r.Matches = append(r.Matches, c.label[id])
		}
		return r, nil
	}
	seen := make(map[X]struct{}, n)
	for _, id := range ids[:n] {
		x := c.label[id]
		if _, dup := seen[x]; !dup {
			seen[x] = struct{}{}
			r.Matches = append(r.Matches, x)
		}
	}
	return r, nil
}
