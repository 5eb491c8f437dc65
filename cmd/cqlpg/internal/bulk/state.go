package bulk

import (
	"encoding/json"
	"os"
)

func readState(path string) (loadState, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return loadState{}, false
	}
	var s loadState
	if json.Unmarshal(b, &s) != nil {
		return loadState{}, false
	}
	return s, true
}

// writeState replaces the progress file atomically, so that an
// interruption leaves the previous or the new state, never half of one.
func writeState(path string, s loadState) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
