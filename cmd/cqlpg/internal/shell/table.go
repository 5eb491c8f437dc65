package shell

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable prints rows as cqlsh prints a result: a blank line, the
// column names left-aligned, a rule, each row with its values
// right-aligned, a blank line and "(N rows)".
func WriteTable(w io.Writer, names []string, rows [][]string) {
	widths := make([]int, len(names))
	for i, n := range names {
		widths[i] = width(n)
	}
	for _, r := range rows {
		for i, v := range r {
			widths[i] = max(widths[i], width(v))
		}
	}
	var b strings.Builder
	b.WriteString("\n")
	cells := make([]string, len(names))
	for i, n := range names {
		cells[i] = n + strings.Repeat(" ", widths[i]-width(n))
	}
	b.WriteString(strings.TrimRight(" "+strings.Join(cells, " | "), " ") + "\n")
	for i, wd := range widths {
		cells[i] = strings.Repeat("-", wd)
	}
	b.WriteString("-" + strings.Join(cells, "-+-") + "-\n")
	for _, r := range rows {
		for i, v := range r {
			cells[i] = strings.Repeat(" ", widths[i]-width(v)) + v
		}
		b.WriteString(" " + strings.Join(cells, " | ") + "\n")
	}
	fmt.Fprintf(&b, "\n(%d rows)\n", len(rows))
	io.WriteString(w, b.String())
}

// width is the number of terminal cells a value takes: one per
// character, two for East Asian wide ones.
func width(s string) int {
	n := 0
	for _, r := range s {
		n++
		if wide(r) {
			n++
		}
	}
	return n
}

func wide(r rune) bool {
	return r >= 0x1100 && (r <= 0x115f || r == 0x2329 || r == 0x232a ||
		(r >= 0x2e80 && r <= 0xa4cf && r != 0x303f) || (r >= 0xac00 && r <= 0xd7a3) ||
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0xfe30 && r <= 0xfe6f) || (r >= 0xff00 && r <= 0xff60) ||
		(r >= 0xffe0 && r <= 0xffe6) || (r >= 0x1f300 && r <= 0x1f64f) || (r >= 0x20000 && r <= 0x3fffd))
}
