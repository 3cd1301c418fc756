package filtervm

import (
	"strconv"
	"strings"
	"sync"
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

// The attribute type names fvmgo_parts knows as static C strings (cgo.go), by kind.
var attributeKinds = map[string]uint64{"String": 0, "Number": 1, "Binary": 2, "String.Array": 3}

// customKind marks a type name copied into the buffer, NUL-terminated.
const customKind = 4

// encoded is a message's parts as one byte buffer and the offsets that describe it (the layout
// fvmgo_parts in cgo.go reads).
type encoded struct {
	parts    uint32
	buf      []byte
	desc     []uint64
	nattrs   int
	nheaders int
}

var encodedPool = sync.Pool{New: func() any { return &encoded{} }}

// encode lays out m's parts; the caller returns e to encodedPool after the call.
func encode(m *Message) (*encoded, error) {
	e := encodedPool.Get().(*encoded)
	e.parts, e.buf, e.desc, e.nattrs, e.nheaders = 0, e.buf[:0], e.desc[:0], 0, 0
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
			kind, known := attributeKinds[a.DataType]
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
	return e, nil
}

// release returns e to the pool unless it grew large (a huge message's buffer is not kept).
func (e *encoded) release() {
	if cap(e.buf) <= 1<<16 && cap(e.desc) <= 1<<12 {
		encodedPool.Put(e)
	}
}
