package filtervm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// repoRoot is the repository's root, two levels above this package.
const repoRoot = "../.."

// vector is one conformance case (conformance/FORMAT.md), each member kept as the exact JSON
// text the file wrote (numbers such as 1e400 reach filtervm unchanged).
type vector struct {
	File    string
	ID      string          `json:"id"`
	Dialect string          `json:"dialect"`
	Options json.RawMessage `json:"options"`
	Policy  json.RawMessage `json:"policy"`
	Message json.RawMessage `json:"message"`
	Expect  string          `json:"expect"`
	Error   string          `json:"error"`
}

func (v vector) String() string { return v.File + ":" + v.ID }

// optionsText is the options to give Compile ("" for the defaults).
func (v vector) optionsText() string {
	if len(v.Options) == 0 || string(v.Options) == "null" {
		return ""
	}
	return string(v.Options)
}

// loadVectors reads every case of conformance/vectors/*.jsonl and vectors/local/*.jsonl.
func loadVectors(t *testing.T) []vector {
	t.Helper()
	dir := filepath.Join(repoRoot, "conformance", "vectors")
	top, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	local, _ := filepath.Glob(filepath.Join(dir, "local", "*.jsonl"))
	sort.Strings(top)
	sort.Strings(local)
	files := append(top, local...)
	if len(files) == 0 {
		t.Fatalf("no vector files under %s", dir)
	}
	var out []vector
	for _, path := range files {
		rel, _ := filepath.Rel(dir, path)
		for _, line := range readLines(t, path) {
			var v vector
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			v.File = rel
			out = append(out, v)
		}
	}
	return out
}

// readLines returns the non-blank lines of a file.
func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 1<<20), 1<<26)
	for scanner.Scan() {
		if len(bytes.TrimSpace(scanner.Bytes())) > 0 {
			lines = append(lines, append([]byte(nil), scanner.Bytes()...))
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// policyText is a policy as Compile takes it: the stream text form is the JSON string's content.
func policyText(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// outcome is "match", "no-match", or the code of the *MessageError (anything else fails t).
func outcome(t *testing.T, what string, ok bool, err error) string {
	t.Helper()
	if err == nil {
		if ok {
			return "match"
		}
		return "no-match"
	}
	var m *MessageError
	if !errors.As(err, &m) {
		t.Fatalf("%s: not a *MessageError: %T %v", what, err, err)
	}
	return m.Code()
}

// hasDuplicateMembers reports whether some object of the JSON text names a member twice (a Go
// map cannot say so).
func hasDuplicateMembers(text []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(text))
	type frame struct {
		object bool
		seen   map[string]bool
		key    bool // the next string token of an object is a member name
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &frame{object: tok == '{', seen: map[string]bool{}, key: true})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.object && top.key {
				if top.seen[tok] {
					return true
				}
				top.seen[tok] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true
		}
	}
}

// decode reads JSON text with numbers kept as their text.
func decode(text []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// scalarText is a JSON string's value or a number's text ("", false for anything else).
func scalarText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	}
	return "", false
}

// headersOf converts {"name": "v" | ["v", ...]} to Headers (false when it is not that shape).
func headersOf(v any) (Headers, bool) {
	if v == nil {
		return Headers{}, true
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	h := Headers{}
	for name, value := range obj {
		switch value := value.(type) {
		case string:
			h[name] = []string{value}
		case []any:
			for _, item := range value {
				s, ok := item.(string)
				if !ok {
					return nil, false
				}
				h[name] = append(h[name], s)
			}
			if len(value) == 0 {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return h, true
}

// attributesOf converts {"name": {"Type"|"type": T, "Value"|"value": V}} to Attributes.
func attributesOf(v any) (Attributes, bool) {
	if v == nil {
		return Attributes{}, true
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	a := Attributes{}
	for name, value := range obj {
		typed, ok := value.(map[string]any)
		if !ok {
			return nil, false
		}
		dataType, ok1 := typed["Type"].(string)
		if !ok1 {
			dataType, ok1 = typed["type"].(string)
		}
		text, ok2 := scalarText(typed["Value"])
		if !ok2 {
			text, ok2 = scalarText(typed["value"])
		}
		if !ok1 || !ok2 {
			return nil, false
		}
		a[name] = Attribute{DataType: dataType, Value: text}
	}
	return a, true
}

// partsOf is a vector's message as the parts its dialect reads (false: no such form).
func partsOf(v vector) (Message, bool) {
	if v.Dialect == "eventgrid" || v.Dialect == "eventbridge" {
		// The event is the body, as its text (a member name it repeats stays repeated, EB-3).
		return Message{Body: []byte(v.Message)}, true
	}
	if hasDuplicateMembers(v.Message) {
		return Message{}, false
	}
	doc, err := decode(v.Message)
	if err != nil {
		return Message{}, false
	}
	obj, isObject := doc.(map[string]any)
	switch v.Dialect {
	case "stream", "expr":
		if !isObject {
			return Message{}, false
		}
		h, ok := headersOf(obj["headers"])
		return Message{Headers: h}, ok
	}
	if !isObject {
		return Message{}, false
	}
	var options struct{ Scope string }
	if v.optionsText() != "" {
		_ = json.Unmarshal(v.Options, &options)
	}
	if v.Dialect == "sns" && options.Scope == "MessageBody" {
		body, ok := obj["body"].(string)
		return Message{Body: []byte(body)}, ok
	}
	a, ok := attributesOf(obj["attributes"])
	return Message{Attributes: a}, ok
}
