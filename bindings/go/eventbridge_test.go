package filtervm

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A program written against the quamina-shaped set, as a quamina user writes it (New,
// AddPattern, MatchesForEvent, DeletePatterns), on the EventBridge vectors: every pattern of a
// vector file in one set, labelled by the vector's id; each vector's id is in the result for its
// event exactly when the vector expects a match; an invalid pattern is a *PolicyError from
// AddPattern and adds nothing.
func TestQuaminaShapedSetOnTheEventBridgeVectors(t *testing.T) {
	dir := filepath.Join(repoRoot, "conformance", "vectors")
	files := []string{filepath.Join(dir, "eventbridge.jsonl")}
	if _, err := os.Stat(filepath.Join(dir, "local", "eventbridge.jsonl")); err == nil {
		files = append(files, filepath.Join(dir, "local", "eventbridge.jsonl"))
	}
	checked := 0
	for _, path := range files {
		q, err := New[string]()
		if err != nil {
			t.Fatal(err)
		}
		var cases []vector
		for _, line := range readLines(t, path) {
			var v vector
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			v.File = filepath.Base(path)
			if v.Dialect != "eventbridge" || v.optionsText() != "" {
				t.Fatalf("%v: dialect %s, options %s", v, v.Dialect, v.optionsText())
			}
			err := q.AddPattern(v.ID, string(v.Policy))
			if v.Expect == "invalid" {
				var pe *PolicyError
				if !errors.As(err, &pe) {
					t.Errorf("%v: AddPattern: %v, want a *PolicyError", v, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v: AddPattern: %v", v, err)
			}
			cases = append(cases, v)
		}
		if q.Len() != len(cases) {
			t.Fatalf("%s: %d labels for %d valid patterns", path, q.Len(), len(cases))
		}
		for _, v := range cases {
			got, err := q.MatchesForEvent(v.Message)
			if err != nil {
				t.Errorf("%v: MatchesForEvent: %v", v, err)
				continue
			}
			in := false
			for _, x := range got {
				in = in || x == v.ID
			}
			if in != (v.Expect == "match") {
				t.Errorf("%v: in MatchesForEvent's result %v, want %s", v, in, v.Expect)
			}
			checked++
		}
		// DeletePatterns: every label goes, and no event matches anything.
		for _, v := range cases {
			if err := q.DeletePatterns(v.ID); err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range cases {
			if got, err := q.MatchesForEvent(v.Message); err != nil || len(got) != 0 {
				t.Fatalf("%v after DeletePatterns: %v %v", v, got, err)
			}
		}
		q.Close()
	}
	t.Logf("%d eventbridge vectors matched through AddPattern / MatchesForEvent", checked)
	if checked < 100 {
		t.Fatalf("only %d eventbridge vectors checked", checked)
	}
}
