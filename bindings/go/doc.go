// Package filtervm is the Go binding of filtervm, a compile-to-bytecode filter VM for
// subscription filters: SNS filter policies ("sns"), the notification service's policies
// ("basaltic"), Event Grid filters ("eventgrid"), stream clause groups ("stream"), nested
// expression trees ("expr") and EventBridge event patterns ("eventbridge").
//
// It calls the library's C ABI (capi/include/filtervm.h) through cgo, linking the static library
// built by `cargo build --release -p filtervm-capi`; standard library only.
//
//   - Compile a policy into a *Filter and match messages with Filter.Matches (one JSON document)
//     or Filter.MatchesMessage (a Message of the parts a broker holds: body, attributes,
//     headers).
//   - Every error is a typed value for errors.As: *PolicyError (every problem of a policy, each
//     with its stable code, JSON Pointer and message), *MessageError (a message a filter cannot
//     judge: never a quiet false), *LoadError, *ArgumentError, *SetError, *InternalError.
//   - Set is shaped like quamina's Quamina (New, AddPattern, DeletePatterns, MatchesForEvent,
//     Copy), takes filters of every dialect (AddFilter), and reports the groups of
//     subscriptions that could not judge a message (Matching, UnjudgedError) instead of losing
//     the others' matches.
//   - For messages validated upstream, the ...Read calls (Filter.MatchesRead, Set.MatchingRead,
//     ...) take ReadTrusted: members no filter reads are skipped by their structure alone.
//
// Filters and sets hold native memory: Close them (a finalizer is only a safety net).
package filtervm
