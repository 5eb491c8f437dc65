package translate

import (
	"fmt"
	"strings"
	"testing"
)

// scanAll returns every token of src up to, not including, EOF.
func scanAll(src string) []token {
	s := newScanner(src)
	var out []token
	for {
		t := s.next()
		if t.kind == tokEOF {
			return out
		}
		out = append(out, t)
		if len(out) > 1000 {
			panic("scanner does not advance")
		}
	}
}

var kindNames = map[tokenKind]string{
	tokEOF: "EOF", tokIdent: "ident", tokQuotedIdent: "qident", tokString: "string",
	tokInteger: "int", tokFloat: "float", tokUUID: "uuid", tokHex: "hex", tokDuration: "duration",
	tokMarker: "marker", tokNamedMarker: "named", tokPunct: "punct", tokIllegal: "illegal",
}

// describe renders tokens as kind:text, one per token, for comparison.
func describe(toks []token) string {
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = kindNames[t.kind] + ":" + t.text
	}
	return strings.Join(parts, " ")
}

func TestScanTokens(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"keywords in both cases fold to lower case", "SELECT select SeLeCt FROM from",
			"ident:select ident:select ident:select ident:from ident:from"},
		{"unquoted identifiers fold, quoted keep case", `MyCol mycol "MyCol" "select" "a""b" "with space"`,
			`ident:mycol ident:mycol qident:MyCol qident:select qident:a"b qident:with space`},
		{"identifiers with digits and underscores", "race_year Col_2 x1",
			"ident:race_year ident:col_2 ident:x1"},
		{"line comment with --", "a -- comment ; 'x' \nb", "ident:a ident:b"},
		{"line comment with //", "a // comment ? \nb", "ident:a ident:b"},
		{"block comment", "a /* one\ntwo * / */ b/**/c", "ident:a ident:b ident:c"},
		{"comment at the end", "a -- no newline", "ident:a"},
		{"unterminated block comment is an error", "a /* b c", "ident:a illegal:"},
		{"string", "'abc'", "string:abc"},
		{"string with doubled quote", "'it''s' ''''", "string:it's string:'"},
		{"empty string", "''", "string:"},
		{"string keeps comments and markers", "'-- x /* ? :y'", "string:-- x /* ? :y"},
		{"dollar string", "$$it's a 'quote'$$", "string:it's a 'quote'"},
		{"dollar string with $ inside", "$$a$b$$", "string:a$b"},
		{"empty dollar string", "$$$$", "string:"},
		{"blob", "0xCAFEbabe 0X00 0x", "hex:0xCAFEbabe hex:0X00 hex:0x"},
		{"uuid", "41d01b63-244e-435d-bd6d-5dc8a0addb8c", "uuid:41d01b63-244e-435d-bd6d-5dc8a0addb8c"},
		{"uuid in upper case", "41D01B63-244E-435D-BD6D-5DC8A0ADDB8C", "uuid:41D01B63-244E-435D-BD6D-5DC8A0ADDB8C"},
		{"uuid followed by punctuation", "(41d01b63-244e-435d-bd6d-5dc8a0addb8c,",
			"punct:( uuid:41d01b63-244e-435d-bd6d-5dc8a0addb8c punct:,"},
		{"compact durations", "12h30m 1mo 3d -2w 1y2mo 5ms 7us 9ns 1h30m15s",
			"duration:12h30m duration:1mo duration:3d duration:-2w duration:1y2mo duration:5ms duration:7us duration:9ns duration:1h30m15s"},
		{"duration units in upper case", "1H 2MO", "duration:1H duration:2MO"},
		{"duration in microseconds with µ", "5µs", "duration:5µs"},
		{"ISO durations", "P1Y2M PT4H P2W P1Y2M3DT4H5M6S", "duration:P1Y2M duration:PT4H duration:P2W duration:P1Y2M3DT4H5M6S"},
		{"ISO durations are upper case only", "p1d pt pT4H", "ident:p1d ident:pt ident:pt4h"},
		{"ISO alternative durations", "P0001-02-03T04:05:06 -P0001-02-03T04:05:06",
			"duration:P0001-02-03T04:05:06 duration:-P0001-02-03T04:05:06"},
		{"negative ISO durations", "-P1D -PT1H -P2W", "duration:-P1D duration:-PT1H duration:-P2W"},
		{"minus before a word that is no duration", "-Pa -P", "punct:- ident:pa punct:- ident:p"},
		{"an alternative format needs every digit", "P0001-02-03T04:05:6", "ident:p0001 int:-02 int:-03 ident:t04 punct:: int:05 punct:: int:6"},
		{"identifiers starting with p are not durations", "points p1 p", "ident:points ident:p1 ident:p"},
		{"integers", "0 42 -7 2000", "int:0 int:42 int:-7 int:2000"},
		{"floats", "1.5 1e10 -3.2 1.5E-3 2e+2 .5 -.5 3.", "float:1.5 float:1e10 float:-3.2 float:1.5E-3 float:2e+2 float:.5 float:-.5 float:3."},
		{"an exponent needs digits", "1e", "int:1 ident:e"},
		{"NaN and Infinity are words the parser turns into floats", "NaN Infinity -Infinity",
			"ident:nan ident:infinity punct:- ident:infinity"},
		{"bind markers", "? :name :Name :\"Name\" ?", "marker:? named:name named:name named:Name marker:?"},
		{"two-character operators", "<= >= != .. += -= < > = ", "punct:<= punct:>= punct:!= punct:.. punct:+= punct:-= punct:< punct:> punct:="},
		{"range between integers", "1..2", "int:1 punct:.. int:2"},
		{"minus then space is punctuation", "c - 1", "ident:c punct:- int:1"},
		{"punctuation", "(),;.*[]{}:+", "punct:( punct:) punct:, punct:; punct:. punct:* punct:[ punct:] punct:{ punct:} punct:: punct:+"},
		{"statement", "SELECT * FROM ks.t WHERE k=?;",
			"ident:select punct:* ident:from ident:ks punct:. ident:t ident:where ident:k punct:= marker:? punct:;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describe(scanAll(tt.src)); got != tt.want {
				t.Errorf("scan %q:\n got %s\nwant %s", tt.src, got, tt.want)
			}
		})
	}
}

func TestScanIllegal(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unterminated string", "'abc", "illegal:'abc"},
		{"unterminated quoted identifier", `a "abc`, `ident:a illegal:"abc`},
		{"unterminated dollar string", "$$abc", "illegal:$$abc"},
		{"unknown character", "a @ b", "ident:a illegal:@ ident:b"},
		{"single dollar", "$1", "illegal:$ int:1"},
		{"bang alone", "!", "illegal:!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describe(scanAll(tt.src)); got != tt.want {
				t.Errorf("scan %q:\n got %s\nwant %s", tt.src, got, tt.want)
			}
		})
	}
}

func TestScanRaw(t *testing.T) {
	// raw keeps the token as written, which syntax errors quote.
	toks := scanAll(`SeLeCt "Q""x" 'it''s' :Name NaN`)
	var raws []string
	for _, tok := range toks {
		raws = append(raws, tok.raw)
	}
	want := []string{"SeLeCt", `"Q""x"`, "'it''s'", ":Name", "NaN"}
	if fmt.Sprint(raws) != fmt.Sprint(want) {
		t.Errorf("raw = %q, want %q", raws, want)
	}
}

func TestScanPositions(t *testing.T) {
	src := "SELECT *\n  FROM t -- comment\n/* block\ncomment */ WHERE k = 'a\nb' AND\n\n\tv = ?"
	want := []struct {
		raw       string
		line, col int
	}{
		{"SELECT", 1, 0}, {"*", 1, 7},
		{"FROM", 2, 2}, {"t", 2, 7},
		{"WHERE", 4, 11}, {"k", 4, 17}, {"=", 4, 19}, {"'a\nb'", 4, 21},
		{"AND", 5, 3},
		{"v", 7, 1}, {"=", 7, 3}, {"?", 7, 5},
	}
	toks := scanAll(src)
	if len(toks) != len(want) {
		t.Fatalf("got %d tokens (%s), want %d", len(toks), describe(toks), len(want))
	}
	for i, w := range want {
		tok := toks[i]
		if tok.raw != w.raw || tok.pos.Line != w.line || tok.pos.Col != w.col {
			t.Errorf("token %d = %q at %d:%d, want %q at %d:%d", i, tok.raw, tok.pos.Line, tok.pos.Col, w.raw, w.line, w.col)
		}
		if src[tok.pos.Offset:tok.pos.Offset+len(tok.raw)] != tok.raw {
			t.Errorf("token %d: offset %d does not point at %q", i, tok.pos.Offset, tok.raw)
		}
	}
	end := newScanner(src)
	for end.next().kind != tokEOF {
	}
	if eof := end.next(); eof.pos.Line != 7 || eof.pos.Col != 6 || eof.raw != "<EOF>" {
		t.Errorf("EOF at %d:%d %q, want 7:6 <EOF>", eof.pos.Line, eof.pos.Col, eof.raw)
	}
}
