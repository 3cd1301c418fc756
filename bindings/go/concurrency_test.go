package filtervm

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// Goroutines match on their own Copy()s (and two share one handle) while another adds and
// deletes subscriptions: every match sees every stable subscription, in order, and nothing but
// stable or churning labels. Run with `go test -race` (ci.sh does) to check the binding's own
// synchronization.
func TestConcurrentMatchingWhileOneGoroutineChangesTheSet(t *testing.T) {
	const stable, churn = 50, 50
	rounds := 3_000
	if raceEnabled {
		rounds = 500
	}
	s := mustNew[int](t)
	defer s.Close()
	match := mustCompile(t, "sns", `{"k": ["v"]}`, "")
	defer match.Close()
	never := mustCompile(t, "stream", "k = other", "")
	defer never.Close()
	for i := 0; i < stable; i++ {
		if err := s.AddFilter(i, match); err != nil {
			t.Fatal(err)
		}
	}
	event := []byte(`{"attributes": {"k": {"Type": "String", "Value": "v"}}, "headers": {"k": "v"}}`)
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	check := func(h *Set[int]) {
		defer wg.Done()
		for n := 0; n < rounds; n++ {
			got, err := h.MatchesForEvent(event)
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < stable; i++ {
				if i >= len(got) || got[i] != i {
					errs <- errors.New("a stable subscription is missing: " + strconv.Itoa(len(got)))
					return
				}
			}
			for _, x := range got[stable:] {
				if x < 1000 || x >= 1000+churn {
					errs <- errors.New("an unknown label: " + strconv.Itoa(x))
					return
				}
			}
		}
	}
	shared := s.Copy()
	defer shared.Close()
	for g := 0; g < 4; g++ {
		wg.Add(1)
		h := s.Copy()
		defer h.Close()
		go check(h)
	}
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go check(shared) // one handle, two goroutines
	}
	var changes atomic.Int64
	var writer sync.WaitGroup
	writer.Add(1)
	go func() {
		defer writer.Done()
		w := s.Copy()
		defer w.Close()
		for i := 0; !done.Load(); i++ {
			x := 1000 + i%churn
			f := match
			if i%3 == 0 {
				f = never
			}
			if err := w.AddFilter(x, f); err != nil {
				errs <- err
				return
			}
			if i%2 == 1 {
				if err := w.DeletePatterns(1000 + (i/2)%churn); err != nil {
					errs <- err
					return
				}
			}
			changes.Add(1)
		}
	}()
	wg.Wait()
	done.Store(true)
	writer.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if changes.Load() == 0 {
		t.Error("the writer made no change while the matchers ran")
	}
	t.Logf("%d changes during %d matches", changes.Load(), 6*rounds)
}

// One Filter matched from many goroutines while another closes it: each match returns a verdict
// or the closed filter's *ArgumentError, never a crash.
func TestFilterClosedWhileMatching(t *testing.T) {
	for round := 0; round < 20; round++ {
		f := mustCompile(t, "expr", `{"key": "a", "op": "in", "value": ["x"]}`, "")
		var wg sync.WaitGroup
		var bad atomic.Int64
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					ok, err := f.MatchesMessage(Message{Headers: Headers{"a": {"x"}}})
					var ae *ArgumentError
					if !(ok && err == nil) && !errors.As(err, &ae) {
						bad.Add(1)
					}
				}
			}()
		}
		f.Close()
		wg.Wait()
		if bad.Load() != 0 {
			t.Fatalf("%d matches failed otherwise", bad.Load())
		}
	}
}
