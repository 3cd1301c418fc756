package filtervm

// #include "filtervm.h"
import "C"

import (
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// Message is a message given as the parts a broker holds. Each filter reads the part its dialect
// needs: sns (attribute scope) and basaltic the Attributes, sns (MessageBody scope), eventgrid
// and eventbridge the Body, stream and expr the Headers. A nil field is a part not given: a
// message without attributes has the empty attribute set (only the policy {} matches it, sns
// rule 12), a message without the body or headers a filter reads is a *MessageError with code
// MESSAGE_SHAPE. At least one part must be given. The library's table of every situation is
// filtervm/MESSAGES.md.
type Message struct {
	// Body is the raw body (an SNS message body, an Event Grid event); nil: no body, a
	// non-nil empty slice: an empty body.
	Body []byte
	// Attributes are the typed attributes; nil: none given.
	Attributes Attributes
	// Headers are the headers; nil: none given.
	Headers Headers
}

// Attribute is one typed attribute, as SNS and SQS carry it.
type Attribute struct {
	// DataType is "String", "Number", "String.Array", "Binary", or an SNS custom type
	// ("String.x", "Number.x", "Binary.x"); another name makes the attributes unreadable
	// (INVALID_MESSAGE for the filters that read them).
	DataType string
	// Value is the value's text (for String.Array the JSON text of an array; for Binary any
	// bytes). A value that is not UTF-8 is present but satisfies no string test.
	Value string
}

// Attributes maps an attribute name (case-sensitive) to its typed value.
type Attributes map[string]Attribute

// Headers maps a header name (case-sensitive) to its values, as net/http and NATS hold them
// (http.Header and nats.Header convert directly). A name with several values is a header given
// several times: expr filters read them all (any may match); a stream header has one value (a
// stream filter reports INVALID_MESSAGE). A name with no value cannot be passed through the C
// ABI (a header there is a name and a value): it is an *ArgumentError.
type Headers map[string][]string

// kindOf is the index of a type name fvmgo_parts knows as a static C string (cgo.go).
func kindOf(dataType string) (uint64, bool) {
	switch dataType {
	case "String":
		return 0, true
	case "Number":
		return 1, true
	case "Binary":
		return 2, true
	case "String.Array":
		return 3, true
	}
	return 0, false
}

// customKind marks a type name copied into the buffer, NUL-terminated.
const customKind = 4

// encoded is a message's parts as one byte buffer and the offsets that describe it (the layout
// fvmgo_parts in cgo.go reads).
type encoded struct {
	parts    uint32
	buf      []byte
	desc     []uint64
	descOff  int
	nattrs   int
	nheaders int
	// out receives a call's result count and error object (kept with the pooled value, so
	// passing its addresses to C allocates nothing).
	out *callOut
}

// callOut is where C writes a call's count and error object: its own allocation without Go
// pointers, as cgo requires of the memory a pointer passed to C points into.
type callOut struct {
	count C.size_t
	err   *C.fvm_error
}

var encodedPool = sync.Pool{New: func() any { return &encoded{out: &callOut{}} }}

// newEncoded is an empty value from the pool (release returns it).
func newEncoded() *encoded {
	e := encodedPool.Get().(*encoded)
	e.parts, e.buf, e.desc, e.nattrs, e.nheaders = 0, e.buf[:0], e.desc[:0], 0, 0
	*e.out = callOut{}
	return e
}

// encode lays out m's parts: their bytes, then their description (desc) at descOff; the caller
// returns e to the pool with release after the call.
func encode(m *Message) (*encoded, error) {
	e := newEncoded()
	e.desc = append(e.desc, 0, 0)
	if m.Body != nil {
		e.parts |= partBody
		e.desc[0], e.desc[1] = 0, uint64(len(m.Body))
		e.buf = append(e.buf, m.Body...)
	}
	if m.Attributes != nil {
		e.parts |= partAttributes
		for name, a := range m.Attributes {
			nameOff := len(e.buf)
			e.buf = append(e.buf, name...)
			valueOff := len(e.buf)
			e.buf = append(e.buf, a.Value...)
			kind, known := kindOf(a.DataType)
			typeOff := 0
			if !known {
				if strings.IndexByte(a.DataType, 0) >= 0 {
					encodedPool.Put(e)
					return nil, argumentError("the data type of attribute " + strconv.Quote(name) + " holds a NUL byte")
				}
				kind, typeOff = customKind, len(e.buf)
				e.buf = append(e.buf, a.DataType...)
				e.buf = append(e.buf, 0)
			}
			e.desc = append(e.desc, uint64(nameOff), uint64(len(name)), uint64(valueOff), uint64(len(a.Value)), kind, uint64(typeOff))
			e.nattrs++
		}
	}
	if m.Headers != nil {
		e.parts |= partHeaders
		for name, values := range m.Headers {
			if len(values) == 0 {
				encodedPool.Put(e)
				return nil, argumentError("header " + strconv.Quote(name) + " has no value: the C ABI passes a header as a name and a value (give it at least one, or leave it out)")
			}
			nameOff := len(e.buf)
			e.buf = append(e.buf, name...)
			for _, v := range values {
				valueOff := len(e.buf)
				e.buf = append(e.buf, v...)
				e.desc = append(e.desc, uint64(nameOff), uint64(len(name)), uint64(valueOff), uint64(len(v)))
				e.nheaders++
			}
		}
	}
	e.descOff = len(e.buf)
	e.buf = append(e.buf, unsafe.Slice((*byte)(unsafe.Pointer(&e.desc[0])), len(e.desc)*8)...)
	return e, nil
}

// release returns e to the pool unless it grew large (a huge message's buffer is not kept).
func (e *encoded) release() {
	if cap(e.buf) <= 1<<16 && cap(e.desc) <= 1<<12 {
		encodedPool.Put(e)
	}
}
