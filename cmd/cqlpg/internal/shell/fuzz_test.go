package shell

import (
	"strings"
	"testing"
)

// FuzzSplit splits any script: it never panics, statements are trimmed
// and not empty, and their lines do not go back.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"SELECT 1; SELECT 2", "a 'b;c' \"d;e\" $$f;g$$; h", "-- x;\n/* y; */ z;", "'unterminated; x", "$$ open"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		line := 0
		for _, st := range Split(script) {
			if st.Text == "" || st.Text != strings.TrimSpace(st.Text) {
				t.Fatalf("statement %q", st.Text)
			}
			if st.Line < line || st.Line > strings.Count(script, "\n")+1 {
				t.Fatalf("line %d after %d", st.Line, line)
			}
			line = st.Line
		}
	})
}
