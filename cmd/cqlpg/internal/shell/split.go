package shell

import "strings"

// Statement is one statement of a script and the line it ends on.
type Statement struct {
	Text string
	Line int
}

// Split cuts a script into statements at semicolons outside string
// literals ('...', with ” inside), quoted names ("..."), $$ strings and
// comments (--, // to the end of the line, /* */). Comments are dropped;
// statements are trimmed and empty ones skipped. A last statement
// without a semicolon is kept.
func Split(script string) []Statement {
	var out []Statement
	var cur strings.Builder
	line := 1
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, Statement{Text: s, Line: line})
		}
		cur.Reset()
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '\n':
			line++
			cur.WriteByte(c)
		case c == ';':
			flush()
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(script) {
				if script[j] == c {
					if j+1 < len(script) && script[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(script))
			line += strings.Count(script[i:end], "\n")
			cur.WriteString(script[i:end])
			i = end - 1
		case c == '$' && i+1 < len(script) && script[i+1] == '$':
			j := strings.Index(script[i+2:], "$$")
			end := len(script)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			line += strings.Count(script[i:end], "\n")
			cur.WriteString(script[i:end])
			i = end - 1
		case (c == '-' || c == '/') && i+1 < len(script) && script[i+1] == c:
			j := strings.IndexByte(script[i:], '\n')
			if j < 0 {
				i = len(script)
			} else {
				i += j - 1 // the newline itself is kept
			}
		case c == '/' && i+1 < len(script) && script[i+1] == '*':
			j := strings.Index(script[i+2:], "*/")
			end := len(script)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			line += strings.Count(script[i:end], "\n")
			cur.WriteByte(' ')
			i = end - 1
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}
