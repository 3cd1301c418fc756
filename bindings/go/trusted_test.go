package filtervm

import (
	"errors"
	"fmt"
	"testing"
)

// ReadTrusted (README.md, "Trusted input"): on valid JSON every conformance vector gets the same
// verdict in both read modes, through a filter (document and parts) and a set; a document whose
// only faults are in members no filter reads is MESSAGE_NOT_JSON read validating (the default)
// and gets a verdict read trusted; a mode that is neither is an *ArgumentError.

func TestReadModesAgreeOnEveryVector(t *testing.T) {
	checked := 0
	for _, v := range loadVectors(t) {
		if v.Expect == "invalid" {
			continue
		}
		f, err := Compile(v.Dialect, policyText(v.Policy), v.optionsText())
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		want := v.Expect
		if notAnEvent(v) {
			want = "INVALID_MESSAGE"
		}
		for _, mode := range []ReadMode{ReadValidating, ReadTrusted} {
			ok, err := f.MatchesRead(v.Message, mode)
			if got := outcome(t, v.String(), ok, err); got != want {
				t.Errorf("%v read %v as a document: %s, want %s", v, mode, got, want)
			}
			if m, has := partsOf(v); has && !notAnEvent(v) {
				ok, err := f.MatchesMessageRead(m, mode)
				if got := outcome(t, v.String(), ok, err); got != want {
					t.Errorf("%v read %v as parts: %s, want %s", v, mode, got, want)
				}
			}
		}
		if !notAnEvent(v) {
			s := mustNew[string](t)
			if err := s.AddFilter(v.ID, f); err != nil {
				t.Fatal(err)
			}
			for _, mode := range []ReadMode{ReadValidating, ReadTrusted} {
				got, err := s.MatchesForEventRead(v.Message, mode)
				if err != nil {
					t.Errorf("%v read %v through a set: %v", v, mode, err)
				} else if (len(got) == 1) != (want == "match") {
					t.Errorf("%v read %v through a set: %v, want %s", v, mode, got, want)
				}
			}
			s.Close()
		}
		f.Close()
		checked++
	}
	if checked < 500 {
		t.Fatalf("only %d vectors checked", checked)
	}
}

// Documents whose only faults are in a member no filter reads (`items`, `note`).
var faultyUnread = map[string][]byte{
	"an invalid literal":       []byte(`{"store": "example_corp", "items": [01, tru]}`),
	"bytes that are not UTF-8": []byte("{\"store\": \"example_corp\", \"note\": \"\xff\xfe\"}"),
}

// The filters that read `store` in a body: an SNS policy on the message body and an EventBridge
// pattern. A body given as Message.Body is not judged as a document: an SNS body that is not JSON
// is a message of its own (no match, sns rule on MessageBody scope), so the parts form checks
// the EventBridge pattern alone.
var bodyReaders = []struct {
	dialect, options string
	parts            bool
}{
	{"sns", `{"scope": "MessageBody"}`, false},
	{"eventbridge", "", true},
}

func TestTrustedReadSkipsFaultsInUnreadMembers(t *testing.T) {
	for _, r := range bodyReaders {
		corp := mustCompile(t, r.dialect, `{"store": ["example_corp"]}`, r.options)
		other := mustCompile(t, r.dialect, `{"store": ["other_corp"]}`, r.options)
		for name, doc := range faultyUnread {
			for _, c := range []struct {
				f    *Filter
				want bool
			}{{corp, true}, {other, false}} {
				what := r.dialect + ", " + name
				// Validating: the default calls and ReadValidating alike.
				validating := map[string]func() (bool, error){
					"Matches":                     func() (bool, error) { return c.f.Matches(doc) },
					"MatchesRead(ReadValidating)": func() (bool, error) { return c.f.MatchesRead(doc, ReadValidating) },
				}
				trusted := map[string]func() (bool, error){
					"MatchesRead(ReadTrusted)": func() (bool, error) { return c.f.MatchesRead(doc, ReadTrusted) },
				}
				if r.parts {
					validating["MatchesMessage"] = func() (bool, error) { return c.f.MatchesMessage(Message{Body: doc}) }
					validating["MatchesMessageRead(ReadValidating)"] = func() (bool, error) {
						return c.f.MatchesMessageRead(Message{Body: doc}, ReadValidating)
					}
					trusted["MatchesMessageRead(ReadTrusted)"] = func() (bool, error) {
						return c.f.MatchesMessageRead(Message{Body: doc}, ReadTrusted)
					}
				}
				for form, run := range validating {
					ok, err := run()
					var me *MessageError
					if !errors.As(err, &me) || me.Code() != "MESSAGE_NOT_JSON" {
						t.Errorf("%s, %s: %v %v, want a *MessageError MESSAGE_NOT_JSON", what, form, ok, err)
					}
				}
				for form, run := range trusted {
					ok, err := run()
					if err != nil || ok != c.want {
						t.Errorf("%s, %s: %v %v, want %v", what, form, ok, err, c.want)
					}
				}
			}
		}
		corp.Close()
		other.Close()
	}
}

func TestTrustedReadInASetGivesTheLabelsValidatingReportsTheGroup(t *testing.T) {
	for _, rd := range bodyReaders {
		s := mustNew[string](t)
		for label, policy := range map[string]string{"corp": `{"store": ["example_corp"]}`, "other": `{"store": ["other_corp"]}`} {
			f := mustCompile(t, rd.dialect, policy, rd.options)
			if err := s.AddFilter(label, f); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		for name, doc := range faultyUnread {
			what := rd.dialect + ", " + name
			forms := map[string]func(ReadMode) (Result[string], error){
				"document": func(m ReadMode) (Result[string], error) { return s.MatchingRead(doc, m) },
			}
			if rd.parts {
				forms["body"] = func(m ReadMode) (Result[string], error) { return s.MatchingMessageRead(Message{Body: doc}, m) }
			}
			for form, run := range forms {
				r, err := run(ReadTrusted)
				if err != nil || !r.Complete() || fmt.Sprint(r.Matches) != "[corp]" {
					t.Errorf("%s as a %s, trusted: %+v %v, want [corp] and complete", what, form, r, err)
				}
				r, err = run(ReadValidating)
				if err != nil || len(r.Matches) != 0 || len(r.Unjudged) != 1 {
					t.Fatalf("%s as a %s, validating: %+v %v, want one unjudged group", what, form, r, err)
				}
				g := r.Unjudged[0]
				if g.Code != "MESSAGE_NOT_JSON" || g.Dialect != rd.dialect || g.Subscriptions != 2 {
					t.Errorf("%s as a %s, validating: group %+v", what, form, g)
				}
			}
			// The defaults validate; MatchesForEvent reports the group as an *UnjudgedError.
			if r, err := s.Matching(doc); err != nil || len(r.Unjudged) != 1 || r.Unjudged[0].Code != "MESSAGE_NOT_JSON" {
				t.Errorf("%s, Matching: %+v %v", what, r, err)
			}
			var ue *UnjudgedError
			if got, err := s.MatchesForEvent(doc); !errors.As(err, &ue) || len(got) != 0 {
				t.Errorf("%s, MatchesForEvent: %v %v, want an *UnjudgedError", what, got, err)
			}
			if got, err := s.MatchesForEventRead(doc, ReadTrusted); err != nil || fmt.Sprint(got) != "[corp]" {
				t.Errorf("%s, MatchesForEventRead(ReadTrusted): %v %v", what, got, err)
			}
		}
		s.Close()
	}
}

func TestUnknownReadModeIsAnArgumentError(t *testing.T) {
	f := mustCompile(t, "sns", `{"store": ["example_corp"]}`, `{"scope": "MessageBody"}`)
	defer f.Close()
	s := mustNew[int](t)
	defer s.Close()
	if err := s.AddFilter(1, f); err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"store": "example_corp"}`)
	for _, mode := range []ReadMode{2, 1 << 31} {
		_, e1 := f.MatchesRead(doc, mode)
		_, e2 := f.MatchesMessageRead(Message{Body: doc}, mode)
		_, e3 := s.MatchingRead(doc, mode)
		_, e4 := s.MatchingMessageRead(Message{Body: doc}, mode)
		got, e5 := s.MatchesForEventRead(doc, mode)
		for i, err := range []error{e1, e2, e3, e4, e5} {
			var ae *ArgumentError
			if !errors.As(err, &ae) || Code(err) != "INVALID_ARGUMENT" {
				t.Errorf("%v, call %d: %T %v, want an *ArgumentError", mode, i+1, err, err)
			}
		}
		if got != nil {
			t.Errorf("%v: labels %v with an error", mode, got)
		}
	}
	if ReadValidating.String() != "validating" || ReadTrusted.String() != "trusted" || ReadMode(5).String() != "ReadMode(5)" {
		t.Errorf("String: %v %v %v", ReadValidating, ReadTrusted, ReadMode(5))
	}
	// The default is validating.
	var zero ReadMode
	if zero != ReadValidating {
		t.Errorf("the zero ReadMode is %v", zero)
	}
}
