// Per-message cost through the Go binding (cgo), for comparison with the same work in Rust
// (capi/examples/per_message.rs) and C (capi/bench/per_message.c); BENCHMARKS.md, "Go".
//
//	python3 bench/workloads.py bench-data
//	go run ./bench/per_message ../../bench-data/pol1c.jsonl ../../bench-data/attrs.jsonl ../../bench-data/pol10k_mixed.jsonl
//
// The policy (sns syntax) runs on the first 10,000 lines of the messages file, each a flat JSON
// object given as attributes (strings -> String, numbers -> Number; the Attributes map built
// beforehand, as a broker holds it) with the policy in attribute scope, or as the raw body with
// the policy in MessageBody scope. Prints `name: ns` lines, the median of 5 rounds of at least
// 0.3 s each; with FILTERVM_ROUTE=NAME only that route runs, one pass, untimed (for
// valgrind --tool=callgrind; the route `none` reads the files and compiles, nothing matched):
//
//   - go_cgo_call_x10: ten calls of an empty C function through cgo per message (what every
//     call pays to cross, times ten);
//   - go_attributes: Filter.MatchesMessage(Message{Attributes: ...});
//   - go_body: Filter.MatchesMessage(Message{Body: ...}), the policy in MessageBody scope;
//   - go_set_attributes: Set.MatchingMessage, a set of this one filter;
//   - go_set1k_attributes: Set.MatchingMessage, a set of the first 1,000 policies of the third
//     file (attribute scope), against rust_library_set1k.
package main

// static int fvmgo_bench_noop(int x) { return x; }
import "C"

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	filtervm "github.com/filtervm/filtervm/bindings/go"
)

const (
	messages    = 10_000
	setPolicies = 1_000
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: per_message POLICY.jsonl MESSAGES.jsonl SET.jsonl")
		os.Exit(2)
	}
	policy := lines(os.Args[1], 1)[0]
	texts := lines(os.Args[2], messages)
	attributes := make([]filtervm.Attributes, len(texts))
	for i, line := range texts {
		attributes[i] = attributesOf(line)
	}
	f := must(filtervm.Compile("sns", policy, ""))
	body := must(filtervm.Compile("sns", policy, `{"scope": "MessageBody"}`))
	one := must(filtervm.New[int]())
	check(one.AddFilter(0, f))
	set := must(filtervm.New[int]())
	for i, p := range lines(os.Args[3], setPolicies) {
		g := must(filtervm.Compile("sns", p, ""))
		check(set.AddFilter(i, g))
		g.Close()
	}

	matched := 0
	// Ten calls per message, so the figure is ten times a call's cost (the runtime's own
	// threads add noise of about a hundred instructions per message under callgrind).
	report("go_cgo_call_x10", len(texts), func() {
		for i := range texts {
			for k := 0; k < 10; k++ {
				matched += int(C.fvmgo_bench_noop(C.int(i & k & 1)))
			}
		}
	})
	report("go_attributes", len(texts), func() {
		for _, a := range attributes {
			if ok, err := f.MatchesMessage(filtervm.Message{Attributes: a}); ok {
				matched++
			} else if err != nil {
				panic(err)
			}
		}
	})
	report("go_body", len(texts), func() {
		for _, b := range texts {
			if ok, err := body.MatchesMessage(filtervm.Message{Body: []byte(b)}); ok {
				matched++
			} else if err != nil {
				panic(err)
			}
		}
	})
	report("go_set_attributes", len(texts), func() {
		for _, a := range attributes {
			r, err := one.MatchingMessage(filtervm.Message{Attributes: a})
			check(err)
			matched += len(r.Matches)
		}
	})
	report("go_set1k_attributes", len(texts), func() {
		for _, a := range attributes {
			r, err := set.MatchingMessage(filtervm.Message{Attributes: a})
			check(err)
			if !r.Complete() {
				panic(r.Unjudged)
			}
			matched += len(r.Matches)
		}
	})
	perRound := 0
	for _, a := range attributes {
		if ok, _ := f.MatchesMessage(filtervm.Message{Attributes: a}); ok {
			perRound++
		}
	}
	fmt.Println("messages:", len(texts))
	fmt.Println("matches_per_round:", perRound)
	if matched < 0 {
		fmt.Println(matched)
	}
}

// report runs round (one pass over the messages) for 5 rounds of at least 0.3 s and prints the
// median nanoseconds per message; with FILTERVM_ROUTE set, only that route runs, once.
func report(name string, n int, round func()) {
	if only, ok := os.LookupEnv("FILTERVM_ROUTE"); ok {
		if only == name {
			round()
		}
		return
	}
	var perMessage []float64
	for r := 0; r < 5; r++ {
		start := time.Now()
		passes := 0
		for time.Since(start) < 300*time.Millisecond {
			round()
			passes++
		}
		perMessage = append(perMessage, float64(time.Since(start).Nanoseconds())/float64(passes)/float64(n))
	}
	sort.Float64s(perMessage)
	fmt.Printf("%s: %.1f\n", name, perMessage[2])
}

// attributesOf is a flat JSON object's string and number members as typed attributes.
func attributesOf(line string) filtervm.Attributes {
	var members map[string]json.RawMessage
	check(json.Unmarshal([]byte(line), &members))
	a := filtervm.Attributes{}
	for name, raw := range members {
		var s string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			a[name] = filtervm.Attribute{DataType: "String", Value: s}
		case len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')):
			a[name] = filtervm.Attribute{DataType: "Number", Value: string(raw)}
		}
	}
	return a
}

func lines(path string, max int) []string {
	file, err := os.Open(path)
	check(err)
	defer file.Close()
	var out []string
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() && len(out) < max {
		out = append(out, scanner.Text())
	}
	check(scanner.Err())
	if len(out) == 0 {
		panic(path + ": no lines")
	}
	return out
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
