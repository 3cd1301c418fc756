// The README's Go quick start (README.md, "Go"; bindings/go/ci.sh checks that the two are the
// same text and that the program prints what the README says).
package main

import (
	"errors"
	"fmt"

	filtervm "github.com/filtervm/filtervm/bindings/go"
)

func main() {
	// One filter: an SNS filter policy on message attributes.
	f, err := filtervm.Compile("sns", `{"store": ["example_corp"], "price": [{"numeric": [">", 10]}]}`, "")
	check(err)
	defer f.Close()
	ok, err := f.MatchesMessage(filtervm.Message{Attributes: filtervm.Attributes{
		"store": {DataType: "String", Value: "example_corp"},
		"price": {DataType: "Number", Value: "12.5"},
	}})
	fmt.Println("matches:", ok, err)

	// Every problem of a policy, each with its code and JSON Pointer.
	_, err = filtervm.Compile("sns", `{"store": "example_corp"}`, "")
	var policyErr *filtervm.PolicyError
	if errors.As(err, &policyErr) {
		for _, d := range policyErr.Errors {
			fmt.Println("policy error:", d.Code, d.Pointer)
		}
	}

	// quamina's calls on EventBridge patterns.
	q, err := filtervm.New[string]()
	check(err)
	defer q.Close()
	check(q.AddPattern("ec2-running", `{"source": ["aws.ec2"], "detail": {"state": ["running"]}}`))
	check(q.AddPattern("any-ec2", `{"source": [{"prefix": "aws.ec2"}]}`))
	matches, err := q.MatchesForEvent([]byte(`{"source": "aws.ec2", "detail": {"state": "running"}}`))
	fmt.Println("patterns:", matches, err)

	// The same set shape for every dialect: labels of any comparable type, filters mixed.
	set, err := filtervm.New[string]()
	check(err)
	defer set.Close()
	check(set.AddFilter("orders", f))
	region, err := filtervm.Compile("stream", "region = eu-*", "")
	check(err)
	defer region.Close()
	check(set.AddFilter("europe", region)) // the set keeps its own copy of each filter

	event := []byte(`{"attributes": {"store": {"Type": "String", "Value": "example_corp"},
	                                  "price": {"Type": "Number", "Value": "20"}},
	                  "headers": {"region": "eu-west-1"}}`)
	labels, err := set.MatchesForEvent(event)
	fmt.Println("labels:", labels, err)

	// A message without headers: the stream group cannot judge it, the others still match.
	r, err := set.Matching([]byte(`{"attributes": {"store": {"Type": "String", "Value": "example_corp"},
	                                              "price": {"Type": "Number", "Value": "20"}}}`))
	check(err)
	fmt.Println("labels:", r.Matches)
	for _, g := range r.Unjudged {
		fmt.Println("unjudged:", g.Dialect, g.Subscriptions, g.Code)
	}

	// Copy() for another goroutine: the copies share the subscriptions.
	done := make(chan []string)
	go func(s *filtervm.Set[string]) {
		defer s.Close()
		labels, _ := s.MatchesForEvent(event)
		done <- labels
	}(set.Copy())
	fmt.Println("from a copy:", <-done)
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
