package bulk

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Field is one CSV field: its text, and whether it was quoted, which
// tells the empty string ("") from null (nothing).
type Field struct {
	Text   string
	Quoted bool
}

// csvReader reads the CSV that cqlsh's COPY TO writes (RFC 4180: commas,
// double quotes doubled inside quoted fields, which may span lines),
// keeping the byte offset after each record and the line it began on.
type csvReader struct {
	r      *bufio.Reader
	offset int64 // bytes consumed
	line   int   // lines consumed
	buf    bytes.Buffer
}

func newCSVReader(r io.Reader, offset int64, line int) *csvReader {
	return &csvReader{r: bufio.NewReaderSize(r, 1<<20), offset: offset, line: line}
}

// CSVError is a malformed or unusable record, naming its line and, where
// it is known, its column.
type CSVError struct {
	Line   int
	Column string
	Err    error
}

func (e *CSVError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("line %d, column %s: %v", e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

func (e *CSVError) Unwrap() error { return e.Err }

// read returns the next record and the line it began on; io.EOF at the
// end. Blank lines are skipped.
func (c *csvReader) read(dst []Field) ([]Field, int, error) {
	dst = dst[:0]
	for {
		b, err := c.r.ReadByte()
		if err == io.EOF {
			return nil, c.line + 1, io.EOF
		}
		if err != nil {
			return nil, c.line + 1, err
		}
		if b == '\n' {
			c.offset++
			c.line++
			continue
		}
		if b == '\r' {
			c.offset++
			continue
		}
		c.r.UnreadByte()
		break
	}
	start := c.line + 1
	for {
		f, end, err := c.field(start)
		if err != nil {
			return nil, start, err
		}
		dst = append(dst, f)
		if end {
			return dst, start, nil
		}
	}
}

// field reads one field and reports whether it ended the record.
func (c *csvReader) field(start int) (Field, bool, error) {
	c.buf.Reset()
	b, err := c.r.ReadByte()
	if err == io.EOF {
		return Field{}, true, nil
	}
	if err != nil {
		return Field{}, false, err
	}
	c.offset++
	if b != '"' {
		for {
			switch b {
			case ',':
				return Field{Text: c.buf.String()}, false, nil
			case '\n':
				c.line++
				return Field{Text: strings.TrimSuffix(c.buf.String(), "\r")}, true, nil
			case '"':
				return Field{}, false, &CSVError{Line: c.line + 1, Err: fmt.Errorf(`bare " in an unquoted field`)}
			}
			c.buf.WriteByte(b)
			if b, err = c.r.ReadByte(); err == io.EOF {
				return Field{Text: c.buf.String()}, true, nil
			} else if err != nil {
				return Field{}, false, err
			}
			c.offset++
		}
	}
	for {
		b, err := c.r.ReadByte()
		if err == io.EOF {
			return Field{}, false, &CSVError{Line: start, Err: fmt.Errorf("quoted field not closed before the end of the file")}
		}
		if err != nil {
			return Field{}, false, err
		}
		c.offset++
		if b == '\n' {
			c.line++
		}
		if b != '"' {
			c.buf.WriteByte(b)
			continue
		}
		next, err := c.r.ReadByte()
		if err == io.EOF {
			return Field{Text: c.buf.String(), Quoted: true}, true, nil
		}
		if err != nil {
			return Field{}, false, err
		}
		c.offset++
		switch next {
		case '"':
			c.buf.WriteByte('"')
		case ',':
			return Field{Text: c.buf.String(), Quoted: true}, false, nil
		case '\n':
			c.line++
			return Field{Text: c.buf.String(), Quoted: true}, true, nil
		case '\r':
			if n, err := c.r.ReadByte(); err == nil && n == '\n' {
				c.offset++
				c.line++
				return Field{Text: c.buf.String(), Quoted: true}, true, nil
			} else if err == nil {
				c.r.UnreadByte()
			}
			fallthrough
		default:
			return Field{}, false, &CSVError{Line: c.line + 1, Err: fmt.Errorf(`unexpected %q after a closing quote`, next)}
		}
	}
}

// writeField appends a field as cqlsh's COPY TO writes it: quoted only
// when it holds a comma, a quote, a line break or leading or trailing
// space, or to tell an empty value from null.
func writeField(dst []byte, s string, null bool) []byte {
	if null {
		return dst
	}
	if s != "" && !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[len(s)-1] != ' ' {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	dst = append(dst, strings.ReplaceAll(s, `"`, `""`)...)
	return append(dst, '"')
}
