package filtervm

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
)

// The message table's situations (tests/situations.jsonl, the fixture every entry point reads;
// its format is described in filtervm/tests/situations.rs) through Go: the same verdict or code
// as Rust, C and Python, for the message as its parts and as one JSON document; in a Set beside
// a filter that judges every message, never all or nothing.

type situation struct {
	Situation     string          `json:"situation"`
	Dialect       string          `json:"dialect"`
	Options       json.RawMessage `json:"options"`
	Policy        json.RawMessage `json:"policy"`
	Parts         *situationParts `json:"parts"`
	PartsDocument *string         `json:"parts_document"`
	// The outcome of PartsDocument where it differs from Expect (an eventbridge filter reads
	// the whole document as the event, EB-1).
	PartsDocumentExpect *string  `json:"parts_document_expect"`
	Document            *string  `json:"document"`
	Expect              string   `json:"expect"`
	LinesSplit          []string `json:"lines_split"`
	raw                 string
}

type situationParts struct {
	Body       *string                    `json:"body"`
	Attributes [][3]string                `json:"attributes"`
	Headers    map[string]json.RawMessage `json:"headers"`
	hasAttrs   bool
}

func (p *situationParts) UnmarshalJSON(b []byte) error {
	type plain situationParts
	if err := json.Unmarshal(b, (*plain)(p)); err != nil {
		return err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return err
	}
	_, p.hasAttrs = members["attributes"]
	return nil
}

// message is the parts as a Message.
func (p *situationParts) message(t *testing.T) Message {
	var m Message
	if p.Body != nil {
		m.Body = []byte(*p.Body)
	}
	if p.hasAttrs {
		m.Attributes = Attributes{}
		for _, a := range p.Attributes {
			m.Attributes[a[0]] = Attribute{DataType: a[1], Value: a[2]}
		}
	}
	if p.Headers != nil {
		m.Headers = Headers{}
		for name, raw := range p.Headers {
			var one string
			var several []string
			switch {
			case json.Unmarshal(raw, &one) == nil:
				m.Headers[name] = []string{one}
			case json.Unmarshal(raw, &several) == nil:
				m.Headers[name] = several
			default:
				t.Fatalf("header %s: %s", name, raw)
			}
		}
	}
	return m
}

func loadSituations(t *testing.T) []situation {
	var out []situation
	for _, line := range readLines(t, filepath.Join(repoRoot, "tests", "situations.jsonl")) {
		var s situation
		if err := json.Unmarshal(line, &s); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		s.raw = string(line)
		out = append(out, s)
	}
	if len(out) < 30 {
		t.Fatalf("%d situations", len(out))
	}
	return out
}

func (s situation) filter(t *testing.T) *Filter {
	options := ""
	if len(s.Options) > 0 {
		options = string(s.Options)
	}
	f, err := Compile(s.Dialect, policyText(s.Policy), options)
	if err != nil {
		t.Fatalf("%s: %v", s.raw, err)
	}
	return f
}

// A header given no value cannot cross the C ABI (a header there is a name and a value): Go
// reports it as an *ArgumentError before the call, where Rust and Python say INVALID_MESSAGE
// for the filters that read headers. README.md ("Go") says so.
func isHeaderWithoutValue(m Message) bool {
	for _, values := range m.Headers {
		if len(values) == 0 {
			return true
		}
	}
	return false
}

func TestEverySituationHasTheSameVerdictOrCode(t *testing.T) {
	witness, err := Compile("sns", "{}", "")
	if err != nil {
		t.Fatal(err)
	}
	defer witness.Close()
	checked, refused := 0, 0
	for _, s := range loadSituations(t) {
		f := s.filter(t)
		type form struct {
			name     string
			matches  func(*Filter) (bool, error)
			matching func(*Set[string]) (Result[string], error)
			expect   string
		}
		var forms []form
		if s.Parts != nil {
			m := s.Parts.message(t)
			if isHeaderWithoutValue(m) {
				_, err := f.MatchesMessage(m)
				var ae *ArgumentError
				if !errors.As(err, &ae) || ae.Code() != "INVALID_ARGUMENT" {
					t.Errorf("%s: a header without a value: %v, want an *ArgumentError", s.raw, err)
				}
				refused++
			} else {
				forms = append(forms, form{"parts",
					func(f *Filter) (bool, error) { return f.MatchesMessage(m) },
					func(set *Set[string]) (Result[string], error) { return set.MatchingMessage(m) },
					s.Expect})
			}
			doc := []byte(*s.PartsDocument)
			docExpect := s.Expect
			if s.PartsDocumentExpect != nil {
				docExpect = *s.PartsDocumentExpect
			}
			forms = append(forms, form{"parts document",
				func(f *Filter) (bool, error) { return f.Matches(doc) },
				func(set *Set[string]) (Result[string], error) { return set.Matching(doc) },
				docExpect})
		} else {
			doc := []byte(*s.Document)
			forms = append(forms, form{"document",
				func(f *Filter) (bool, error) { return f.Matches(doc) },
				func(set *Set[string]) (Result[string], error) { return set.Matching(doc) },
				s.Expect})
		}
		for _, fm := range forms {
			ok, err := fm.matches(f)
			got := outcome(t, s.raw, ok, err)
			if got != fm.expect {
				t.Errorf("%s as %s: %s, want %s", s.raw, fm.name, got, fm.expect)
			}
			// In a set beside a filter that judges every message: never all or nothing.
			set, err := New[string]()
			if err != nil {
				t.Fatal(err)
			}
			if err := set.AddFilter("case", f); err != nil {
				t.Fatal(err)
			}
			if err := set.AddFilter("witness", witness); err != nil {
				t.Fatal(err)
			}
			r, err := fm.matching(set)
			if err != nil {
				t.Fatalf("%s as %s in a set: %v", s.raw, fm.name, err)
			}
			var want []string
			if got == "match" {
				want = append(want, "case")
			}
			wok, werr := fm.matches(witness)
			if outcome(t, s.raw, wok, werr) == "match" {
				want = append(want, "witness")
			}
			if !equalStrings(r.Matches, want) {
				t.Errorf("%s as %s in a set: %v, want %v", s.raw, fm.name, r.Matches, want)
			}
			judged := func(o string) bool { return o == "match" || o == "no-match" }
			named, unjudged := false, 0
			for _, g := range r.Unjudged {
				named = named || (g.Code == fm.expect && g.Dialect == s.Dialect)
				unjudged += g.Subscriptions
			}
			wantUnjudged := 0
			for _, o := range []string{got, outcome(t, s.raw, wok, werr)} {
				if !judged(o) {
					wantUnjudged++
				}
			}
			if named == judged(fm.expect) || unjudged != wantUnjudged || r.Complete() != (wantUnjudged == 0) {
				t.Errorf("%s as %s in a set: unjudged %+v", s.raw, fm.name, r.Unjudged)
			}
			set.Close()
			checked++
		}
		if s.LinesSplit != nil {
			events, err := ReadEvents([]byte(*s.Document))
			if err != nil {
				t.Fatalf("%s: ReadEvents: %v", s.raw, err)
			}
			var got []string
			for _, e := range events {
				ok, err := f.MatchesMessage(Message{Body: e})
				got = append(got, outcome(t, s.raw, ok, err))
			}
			if !equalStrings(got, s.LinesSplit) {
				t.Errorf("%s split into events: %v, want %v", s.raw, got, s.LinesSplit)
			}
		}
		f.Close()
	}
	if checked < 50 || refused != 1 {
		t.Fatalf("%d forms checked, %d refused", checked, refused)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
