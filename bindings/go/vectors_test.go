package filtervm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Every conformance vector of every dialect through Go: an invalid policy is a *PolicyError
// naming the vector's error; every match / no-match verdict holds for the message as one JSON
// document, as the parts its dialect reads (Message), through a filter loaded from its bytes,
// and through one Set per vector file and options value.

// notAnEvent reports whether the vector's Event Grid event is not a JSON object (a batch, a
// scalar): the vectors give the evaluation's verdict on it (EG-2), which the message layer never
// reaches, since an event is one JSON object (filtervm/MESSAGES.md): every binding refuses it
// with INVALID_MESSAGE.
func notAnEvent(v vector) bool {
	return v.Dialect == "eventgrid" && !strings.HasPrefix(strings.TrimSpace(string(v.Message)), "{")
}

func TestVectorsAreAllHere(t *testing.T) {
	vectors := loadVectors(t)
	dialects := map[string]int{}
	valid, invalid := 0, 0
	for _, v := range vectors {
		dialects[v.Dialect]++
		switch v.Expect {
		case "match", "no-match":
			valid++
		case "invalid":
			invalid++
		default:
			t.Fatalf("%v: expect %q", v, v.Expect)
		}
	}
	for _, d := range []string{"sns", "basaltic", "eventgrid", "stream", "expr", "eventbridge"} {
		if dialects[d] == 0 {
			t.Errorf("no vector of dialect %s", d)
		}
	}
	if valid < 500 || invalid < 150 {
		t.Errorf("%d valid and %d invalid vectors: some were not read", valid, invalid)
	}
}

func TestInvalidPolicyIsPolicyErrorWithItsCode(t *testing.T) {
	checked := 0
	for _, v := range loadVectors(t) {
		if v.Expect != "invalid" {
			continue
		}
		f, err := Compile(v.Dialect, policyText(v.Policy), v.optionsText())
		if err == nil {
			f.Close()
			t.Errorf("%v: compiled", v)
			continue
		}
		var pe *PolicyError
		if !errors.As(err, &pe) {
			t.Errorf("%v: %T %v, not a *PolicyError", v, err, err)
			continue
		}
		if len(pe.Errors) == 0 {
			t.Errorf("%v: a PolicyError without details", v)
		}
		for _, d := range pe.Errors {
			if d.Code == "" || strings.ToUpper(d.Code) != d.Code || d.Message == "" {
				t.Errorf("%v: detail %+v", v, d)
			}
		}
		if v.Error != "" {
			// The runner's rule (conformance/FORMAT.md): the code or a message holds the word.
			word := strings.ToLower(v.Error)
			found := false
			for _, d := range pe.Errors {
				found = found || strings.Contains(strings.ToLower(d.Code), word) || strings.Contains(strings.ToLower(d.Message), word)
			}
			if !found {
				t.Errorf("%v: no error names %q: %v", v, v.Error, pe)
			}
		}
		checked++
	}
	if checked < 150 {
		t.Fatalf("only %d invalid vectors", checked)
	}
}

func TestEveryMessageFormGivesTheVectorVerdict(t *testing.T) {
	checked, byParts := 0, 0
	for _, v := range loadVectors(t) {
		if v.Expect == "invalid" {
			continue
		}
		f, err := Compile(v.Dialect, policyText(v.Policy), v.optionsText())
		if err != nil {
			t.Errorf("%v: %v", v, err)
			continue
		}
		if notAnEvent(v) {
			for form, run := range map[string]func() (bool, error){
				"document": func() (bool, error) { return f.Matches(v.Message) },
				"body":     func() (bool, error) { return f.MatchesMessage(Message{Body: v.Message}) },
			} {
				ok, err := run()
				if got := outcome(t, v.String(), ok, err); got != "INVALID_MESSAGE" {
					t.Errorf("%v as %s: %s, want INVALID_MESSAGE", v, form, got)
				}
			}
			f.Close()
			continue
		}
		want := v.Expect
		ok, err := f.Matches(v.Message)
		if got := outcome(t, v.String(), ok, err); got != want {
			t.Errorf("%v as a document: %s, want %s", v, got, want)
		}
		if m, has := partsOf(v); has {
			ok, err := f.MatchesMessage(m)
			if got := outcome(t, v.String(), ok, err); got != want {
				t.Errorf("%v as parts %+v: %s, want %s", v, m, got, want)
			}
			byParts++
		}
		encoded, err := f.ToBytes()
		if err != nil {
			t.Fatalf("%v: ToBytes: %v", v, err)
		}
		loaded, err := FromBytes(encoded)
		if err != nil {
			t.Fatalf("%v: FromBytes: %v", v, err)
		}
		if loaded.Dialect() != v.Dialect {
			t.Errorf("%v: loaded dialect %q", v, loaded.Dialect())
		}
		ok, err = loaded.Matches(v.Message)
		if got := outcome(t, v.String(), ok, err); got != want {
			t.Errorf("%v loaded from bytes: %s, want %s", v, got, want)
		}
		loaded.Close()
		f.Close()
		checked++
	}
	t.Logf("%d vectors checked, %d of them as parts", checked, byParts)
	if checked < 500 || byParts < checked*3/4 {
		t.Fatalf("%d vectors checked, %d of them as parts", checked, byParts)
	}
}

// One Set per vector file and options value (a vector's message carries the part its own options
// read, so a set holds the vectors of one options value): each vector's id is in the result of
// its message exactly when the vector expects a match, and every group judges every message.
func TestOneSetPerFileAndOptionsGivesEveryVerdict(t *testing.T) {
	groups := map[string][]vector{}
	var order []string
	for _, v := range loadVectors(t) {
		if v.Expect == "invalid" || notAnEvent(v) {
			continue
		}
		var options any
		if v.optionsText() != "" {
			if err := json.Unmarshal(v.Options, &options); err != nil {
				t.Fatal(err)
			}
		}
		canonical, _ := json.Marshal(options) // map keys sorted
		key := v.File + " " + string(canonical)
		if _, seen := groups[key]; !seen {
			order = append(order, key)
		}
		groups[key] = append(groups[key], v)
	}
	for _, key := range order {
		cases := groups[key]
		set, err := New[string]()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range cases {
			f, err := Compile(v.Dialect, policyText(v.Policy), v.optionsText())
			if err != nil {
				t.Fatalf("%v: %v", v, err)
			}
			if err := set.AddFilter(v.ID, f); err != nil {
				t.Fatalf("%v: %v", v, err)
			}
			f.Close() // the set keeps its own copy
		}
		if set.Len() != len(cases) {
			t.Fatalf("%s: %d labels for %d vectors", key, set.Len(), len(cases))
		}
		for _, v := range cases {
			got, err := set.MatchesForEvent(v.Message)
			if err != nil {
				t.Errorf("%s %v: %v", key, v, err)
				continue
			}
			in := false
			for _, id := range got {
				in = in || id == v.ID
			}
			if in != (v.Expect == "match") {
				t.Errorf("%s %v: in the set's result %v, want %s", key, v, in, v.Expect)
			}
		}
		set.Close()
	}
}
