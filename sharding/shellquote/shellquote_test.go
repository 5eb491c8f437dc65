package shellquote

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"psql":           "psql",
		"":               `""`,
		"host=/x port=1": `"host=/x port=1"`,
		"it's $HOME":     `'it'\''s $HOME'`,
		`\d+ "ks"."t"`:   `'\d+ "ks"."t"'`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
