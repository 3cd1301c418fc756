package filtervm

import (
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"testing"
)

func mustCompile(t testing.TB, dialect, policy, options string) *Filter {
	t.Helper()
	f, err := Compile(dialect, policy, options)
	if err != nil {
		t.Fatalf("%s %s: %v", dialect, policy, err)
	}
	return f
}

func mustNew[X comparable](t testing.TB) *Set[X] {
	t.Helper()
	s, err := New[X]()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A label with several filters matches once when any matches (quamina: several AddPattern calls
// with one x); DeletePatterns removes all of them; results keep the order labels were added.
func TestSetLabelsHaveSeveralFiltersAndDeleteRemovesThemAll(t *testing.T) {
	s := mustNew[int](t)
	defer s.Close()
	a := mustCompile(t, "sns", `{"k": ["a"]}`, "")
	b := mustCompile(t, "sns", `{"k": ["b"]}`, "")
	any := mustCompile(t, "sns", `{"k": [{"exists": true}]}`, "")
	for _, step := range []struct {
		x int
		f *Filter
	}{{1, a}, {2, any}, {1, b}, {1, any}, {3, b}} {
		if err := s.AddFilter(step.x, step.f); err != nil {
			t.Fatal(err)
		}
	}
	event := func(k string) []byte {
		return []byte(`{"attributes": {"k": {"Type": "String", "Value": "` + k + `"}}}`)
	}
	check := func(k string, want ...int) {
		t.Helper()
		got, err := s.MatchesForEvent(event(k))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("k=%s: %v, want %v", k, got, want)
		}
	}
	check("a", 1, 2)
	check("b", 2, 1, 3) // label 1's first matching filter (b) was added after label 2's
	check("c", 2, 1)
	if s.Len() != 3 {
		t.Errorf("Len %d", s.Len())
	}
	if err := s.DeletePatterns(1); err != nil {
		t.Fatal(err)
	}
	check("a", 2)
	check("b", 2, 3)
	if err := s.DeletePatterns(7); err != nil {
		t.Errorf("deleting a label without patterns: %v", err)
	}
	if s.Len() != 2 {
		t.Errorf("Len %d", s.Len())
	}
	// A label added again after its deletion starts afresh.
	if err := s.AddFilter(1, a); err != nil {
		t.Fatal(err)
	}
	check("a", 2, 1)
}

// Copies share the subscriptions: a change through one is seen through all; closing one leaves
// the others working; the last Close frees the set, and a closed handle reports ArgumentError.
func TestSetCopiesShareTheSubscriptions(t *testing.T) {
	s := mustNew[string](t)
	c := s.Copy()
	f := mustCompile(t, "stream", "a = x", "")
	defer f.Close()
	if err := c.AddFilter("x", f); err != nil {
		t.Fatal(err)
	}
	m := Message{Headers: Headers{"a": {"x"}}}
	for _, h := range []*Set[string]{s, c} {
		r, err := h.MatchingMessage(m)
		if err != nil || fmt.Sprint(r.Matches) != "[x]" || !r.Complete() {
			t.Errorf("%v %v", r, err)
		}
	}
	s.Close()
	s.Close() // twice is harmless
	if _, err := s.MatchingMessage(m); Code(err) != "INVALID_ARGUMENT" {
		t.Errorf("a closed handle: %v", err)
	}
	var ae *ArgumentError
	if err := s.AddFilter("y", f); !errors.As(err, &ae) {
		t.Errorf("AddFilter on a closed handle: %v", err)
	}
	if r, err := c.MatchingMessage(m); err != nil || len(r.Matches) != 1 {
		t.Errorf("the copy after the original's Close: %v %v", r, err)
	}
	d := c.Copy()
	c.Close()
	if r, err := d.MatchingMessage(m); err != nil || len(r.Matches) != 1 {
		t.Errorf("a copy of a copy: %v %v", r, err)
	}
	d.Close()
	if d.core.ptr != nil {
		t.Error("the last Close did not free the set")
	}
	if e := d.Copy(); e.closed.Load() != true {
		t.Error("a copy of a closed handle is open")
	}
}

// A set of mixed dialects given a message some groups cannot read: the others still match, the
// groups are reported (Matching), and MatchesForEvent returns the matches AND an *UnjudgedError.
func TestSetReportsUnjudgedGroupsWithoutLosingTheOthers(t *testing.T) {
	s := mustNew[string](t)
	defer s.Close()
	for _, sub := range []struct{ x, dialect, policy, options string }{
		{"sns", "sns", `{"a": ["x"]}`, ""},
		{"stream", "stream", "a = x", ""},
		{"expr", "expr", `{"key": "a", "op": "exists"}`, ""},
		{"body", "sns", `{"a": ["x"]}`, `{"scope": "MessageBody"}`},
	} {
		f := mustCompile(t, sub.dialect, sub.policy, sub.options)
		if err := s.AddFilter(sub.x, f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	r, err := s.MatchingMessage(Message{Attributes: Attributes{"a": {DataType: "String", Value: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r.Matches) != "[sns]" {
		t.Errorf("matches %v", r.Matches)
	}
	var dialects []string
	for _, g := range r.Unjudged {
		if g.Code != "MESSAGE_SHAPE" || g.Subscriptions != 1 || g.Message == "" || g.Options == "" {
			t.Errorf("group %+v", g)
		}
		dialects = append(dialects, g.Dialect+" "+g.Options)
	}
	sort.Strings(dialects)
	if fmt.Sprint(dialects) != `[expr {"max_depth":32} sns {"scope":"MessageBody"} stream {}]` {
		t.Errorf("unjudged groups %v", dialects)
	}
	got, err := s.MatchesForEvent([]byte(`{"attributes": {"a": {"Type": "String", "Value": "x"}}}`))
	var ue *UnjudgedError
	if !errors.As(err, &ue) || len(ue.Groups) != 3 || fmt.Sprint(got) != "[sns]" {
		t.Errorf("MatchesForEvent: %v, %v", got, err)
	}
	// Every group judges a message with every part.
	r, err = s.MatchingMessage(Message{
		Body:       []byte(`{"a": "x"}`),
		Attributes: Attributes{"a": {DataType: "String", Value: "y"}},
		Headers:    Headers{"a": {"x"}},
	})
	if err != nil || !r.Complete() || fmt.Sprint(r.Matches) != "[stream expr body]" {
		t.Errorf("every part: %+v %v", r, err)
	}
}

// The property the C and Python tests check, through Go: a set of random mixed-dialect filters,
// given random subsets of a message's parts, returns exactly the labels that matching each filter
// on its own returns among the filters that can read the message, and reports the others'
// groups with their codes.
func TestSetReturnsExactlyTheOneByOneMatchesOfTheFiltersThatCanRead(t *testing.T) {
	policies := []struct{ dialect, options, policy string }{
		{"sns", "", `{"a": ["x"]}`},
		{"sns", "", `{"b": [{"exists": false}]}`},
		{"sns", "", `{}`},
		{"sns", "", `{"a": [{"prefix": "x"}], "n": [{"numeric": [">", 0]}]}`},
		{"sns", `{"scope": "MessageBody"}`, `{"a": ["x"]}`},
		{"sns", `{"scope": "MessageBody"}`, `{}`},
		{"basaltic", "", `{"a": ["x"]}`},
		{"basaltic", "", `{"b": [{"exists": false}]}`},
		{"eventgrid", "", `{}`},
		{"eventgrid", "", `{"subjectBeginsWith": "x"}`},
		{"stream", "", "a = x"},
		{"stream", "", "b missing"},
		{"expr", "", `{"key": "a", "op": "in", "value": ["x"]}`},
		{"expr", "", `{"op": "NOT", "exp": [{"key": "b", "op": "exists"}]}`},
	}
	bodies := []string{`{"a": "x", "subject": "x1", "n": 2}`, `{"a": "y", "n": 1}`, `[{"subject": "x"}]`, "5", "not json", `{"subject": `}
	attributes := []Attributes{
		{"a": {"String", "x"}},
		{"a": {"String", "y"}, "b": {"Number", "1"}, "n": {"Number", "3"}},
		{},
		{"a": {"Strung", "x"}},
		{"a": {"Binary", "x"}},
		{"a": {"String", "xyz"}, "n": {"Number", "1.5"}},
	}
	headers := []Headers{{"a": {"x"}}, {"a": {"x", "y"}}, {"b": {"z"}}, {}, {"a": {"y", "x"}}}
	filters := make([]*Filter, len(policies))
	for i, p := range policies {
		filters[i] = mustCompile(t, p.dialect, p.policy, p.options)
		defer filters[i].Close()
	}
	rng := rand.New(rand.NewSource(23))
	partial, complete := 0, 0
	for round := 0; round < 300; round++ {
		s := mustNew[int](t)
		members := make([]int, 1+rng.Intn(10))
		for i := range members {
			members[i] = rng.Intn(len(filters))
			if err := s.AddFilter(i, filters[members[i]]); err != nil {
				t.Fatal(err)
			}
		}
		for k := 0; k < 8; k++ {
			var m Message
			for m.Body == nil && m.Attributes == nil && m.Headers == nil {
				if rng.Intn(2) == 0 {
					m.Body = []byte(bodies[rng.Intn(len(bodies))])
				}
				if rng.Intn(2) == 0 {
					m.Attributes = attributes[rng.Intn(len(attributes))]
				}
				if rng.Intn(2) == 0 {
					m.Headers = headers[rng.Intn(len(headers))]
				}
			}
			r, err := s.MatchingMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			var want []int
			cannot := map[string]int{} // code and dialect -> subscriptions
			for i, f := range members {
				ok, err := filters[f].MatchesMessage(m)
				switch o := outcome(t, "alone", ok, err); o {
				case "match":
					want = append(want, i)
				case "no-match":
				default:
					cannot[o+" "+policies[f].dialect]++
				}
			}
			if fmt.Sprint(r.Matches) != fmt.Sprint(want) {
				t.Fatalf("%+v: set %v, one by one %v", m, r.Matches, want)
			}
			reported := map[string]int{}
			for _, g := range r.Unjudged {
				reported[g.Code+" "+g.Dialect] += g.Subscriptions
			}
			if fmt.Sprint(reported) != fmt.Sprint(cannot) {
				t.Fatalf("%+v: unjudged %v, one by one %v", m, reported, cannot)
			}
			if r.Complete() {
				complete++
			} else {
				partial++
			}
		}
		s.Close()
	}
	if partial < 200 || complete < 200 {
		t.Fatalf("partial %d, complete %d: the rounds do not exercise both", partial, complete)
	}
}

// A result above the handle's buffer (64 ids) is fetched whole.
func TestSetResultsOfAnySize(t *testing.T) {
	s := mustNew[int](t)
	defer s.Close()
	f := mustCompile(t, "sns", `{}`, "")
	defer f.Close()
	for i := 0; i < 1000; i++ {
		if err := s.AddFilter(i, f); err != nil {
			t.Fatal(err)
		}
	}
	for round := 0; round < 2; round++ {
		got, err := s.MatchesForEvent([]byte(`{"attributes": {}}`))
		if err != nil || len(got) != 1000 || got[0] != 0 || got[999] != 999 {
			t.Fatalf("%d ids, %v", len(got), err)
		}
	}
}

// Deleted subscriptions' ids are reused: churn does not grow the id -> label table, and a label
// added again still comes after the labels added before it.
func TestSetChurnReusesIds(t *testing.T) {
	s := mustNew[string](t)
	defer s.Close()
	f := mustCompile(t, "sns", `{}`, "")
	defer f.Close()
	for _, x := range []string{"a", "b"} {
		if err := s.AddFilter(x, f); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 1000; i++ {
		x := "churn" + strconv.Itoa(i)
		if err := s.AddFilter(x, f); err != nil {
			t.Fatal(err)
		}
		if err := s.AddFilter(x, f); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := s.DeletePatterns(x); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeletePatterns("a"); err != nil {
			t.Fatal(err)
		}
		if err := s.AddFilter("a", f); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(s.core.label); got > 2+1000+2 {
		t.Errorf("%d ids for at most %d subscriptions at once", got, 2+1000+2)
	}
	got, err := s.MatchesForEvent([]byte(`{"attributes": {}}`))
	if err != nil || len(got) != 2+500 || got[0] != "b" || got[len(got)-1] != "a" {
		t.Errorf("%d labels, first %v, last %v, %v", len(got), got[0], got[len(got)-1], err)
	}
}
