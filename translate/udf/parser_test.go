package udf

import (
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	for _, body := range []string{
		"return a + b;",
		"",
		";;",
		"// only a comment\n/* and another */",
		"int x = 1, y[] = {1, 2}, z; x++; --x; return x;",
		"List<Map<String, List<Integer>>> l = new ArrayList<>(); return l;",
		"Map<String,Integer> m = new HashMap<String,Integer>(); return m.get(\"a\") >> 1 >>> 2;",
		"if (a < b && b > c) { return a; } else if (a >= b) return b; else return c;",
		"for (int i = 0, j = 10; i < j; i++, j--) continue; for (;;) break; for (final String s : l) {}",
		"do x++; while (x < 10); while (true) { break; }",
		"switch (x) { case 1: case 2: y = 1; break; default: y = 2; }",
		"try { x(); } catch (IllegalStateException | IllegalArgumentException e) { } finally { }",
		"throw new RuntimeException(\"x\");",
		"return (double) a / b + (int) (c * 2) + (Integer) o;",
		"return (a) + b;",
		"return a ? b : c ? d : e;",
		"return java.util.UUID.fromString(s).toString();",
		"return Integer.class;",
		"return new int[3][];",
		"return new String[]{\"a\"}[0].length();",
		"assert x > 0 : \"positive\";",
		"@SuppressWarnings(\"unchecked\") List l = null;",
		"return 'a' + '\\n' + \"\\u00e9\\t\" + 0x1F + 1e10 + 1.5f + 2L + .5 + 0b11 + 1_000;",
		"x <<= 2; x >>= 1; x >>>= 1; x ^= 3; x |= 4; x &= 5; x %= 6;",
		"return a instanceof String;",
	} {
		if _, err := parseBody(body); err != nil {
			t.Errorf("parseBody(%q): %v", body, err)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"foobarbaz", `Line 1: Syntax error, insert ";" to complete BlockStatements`},
		{"return 1", `Line 1: Syntax error, insert ";" to complete BlockStatements`},
		{"\n\nreturn (1;", `Line 3: Syntax error on token ";", ) expected`},
		{"x + 1;", `Line 1: Syntax error, insert "AssignmentOperator Expression" to complete Expression`},
		{"class A {}", "Line 1: class declarations are not supported by cqlpg user functions"},
		{"public static int f() { return 1; }", "Line 1: class declarations are not supported by cqlpg user functions"},
		{"import java.io.*;", "Line 1: imports are not supported by cqlpg user functions"},
		{"synchronized (this) { }", "Line 1: synchronized statements are not supported by cqlpg user functions"},
		{"l.forEach(x -> x);", "Line 1: lambda expressions are not supported by cqlpg user functions"},
		{"Runnable r = () -> {};", "Line 1: lambda expressions are not supported by cqlpg user functions"},
		{"l.stream().map(String::valueOf);", "Line 1: method references are not supported by cqlpg user functions"},
		{"Object o = new Object() { };", "Line 1: anonymous classes are not supported by cqlpg user functions"},
		{"outer: for (;;) break outer;", "Line 1: labeled statements are not supported by cqlpg user functions"},
		{"return this.x;", "Line 1: this and super are not supported by cqlpg user functions"},
		{"try (X x = y) {}", "Line 1: try-with-resources statements are not supported by cqlpg user functions"},
		{"switch (x) { case 1 -> y(); }", "Line 1: switch rules (case ... ->) are not supported by cqlpg user functions"},
		{`return """x""";`, "Line 1: text blocks are not supported by cqlpg user functions"},
		{"return Collections.<String>emptyList();", "Line 1: explicit type arguments are not supported by cqlpg user functions"},
		{"return \"abc;", "Line 1: String literal is not properly closed by a double-quote"},
		{"/* unterminated", "Line 1: Unexpected end of comment"},
		{"return 'ab';", "Line 1: Invalid character constant"},
		{"return \"\\q\";", `Line 1: Invalid escape sequence`},
		{"{ return 1;", `Line 1: Syntax error, insert "}" to complete Block`},
		{"}", `Line 1: Syntax error on token "}", delete this token`},
		{"return 1 = 2;", "Line 1: The left-hand side of an assignment must be a variable"},
		{"return " + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300) + ";",
			"Line 1: the body nests statements or expressions more than 256 deep, which cqlpg user functions do not support"},
		{"return 1" + strings.Repeat("+1", 300) + ";",
			"Line 1: the body nests statements or expressions more than 256 deep, which cqlpg user functions do not support"},
		{strings.Repeat("{", 300), "Line 1: the body nests statements or expressions more than 256 deep, which cqlpg user functions do not support"},
	} {
		_, err := parseBody(c.body)
		if err == nil {
			t.Errorf("parseBody(%q) succeeded, want %q", c.body, c.want)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "Java source compilation failed:\n") || !strings.Contains(msg, c.want) {
			t.Errorf("parseBody(%q) = %q, want it to contain %q", c.body, msg, c.want)
		}
	}
}
