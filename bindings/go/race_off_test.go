//go:build !race

package filtervm

// raceEnabled: the race detector slows every call; long loops run shorter.
const raceEnabled = false
