//go:build race

package gateway

// raceEnabled is set when the race detector runs, which makes sync.Pool
// drop buffers at random and so allocate where steady traffic does not.
const raceEnabled = true
