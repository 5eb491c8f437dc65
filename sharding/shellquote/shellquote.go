package shellquote

import "strings"

// Quote quotes s for a POSIX shell, preferring the double quotes an
// operator expects around a connection string when they are safe.
func Quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\r\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	if !strings.ContainsAny(s, "\"\\$`!") {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
