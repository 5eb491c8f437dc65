package udf

import (
	"errors"
	"testing"
)

// compileCase is a body Compile refuses, with the problem it reports.
type compileCase struct {
	name   string
	params string
	ret    string
	strict bool
	body   string
	want   string // the message after "Java source compilation failed:\n"
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []compileCase{
		// Type errors Java's compiler reports, in ECJ's words.
		{"missing semicolon", "input int", "double", false, `return Math.max(input, input)`,
			"Line 1: Syntax error, insert \";\" to complete BlockStatements\n"},
		{"unknown variable", "a int", "int", false, `return b;`, "Line 1: b cannot be resolved to a variable\n"},
		{"unknown type", "", "int", false, "\nfoobarbaz x;", "Line 2: foobarbaz cannot be resolved to a type\n"},
		{"string to int", "a int", "int", false, `int x = "s"; return x;`, "Line 1: Type mismatch: cannot convert from String to int\n"},
		{"double return for uuid", "input double", "uuid", false, `return Math.sin(input);`,
			"Line 1: Type mismatch: cannot convert from double to UUID\n"},
		{"int return for double", "a int", "double", false, `return 1;`, "Line 1: Type mismatch: cannot convert from int to Double\n"},
		{"long return for int", "a bigint", "int", false, `return a;`, "Line 1: Type mismatch: cannot convert from Long to Integer\n"},
		{"missing return", "a int", "int", false, "if (a > 0)\n  return 1;\n", "Line 3: This method must return a result of type Integer\n"},
		{"empty body", "", "int", false, "", "Line 1: This method must return a result of type Integer\n"},
		{"void return", "a int", "int", false, `return;`, "Line 1: This method must return a result of type Integer\n"},
		{"unknown method", "s text", "int", false, `return s.size();`, "Line 1: The method size() is undefined for the type String\n"},
		{"wrong arguments", "s text", "text", false, `return s.substring("x");`,
			"Line 1: The method substring(int) in the type String is not applicable for the arguments (String)\n"},
		{"unknown static method", "a int", "int", false, `return Math.foo(a);`, "Line 1: The method foo(Integer) is undefined for the type Math\n"},
		{"method on primitive", "a int", "int", true, `return a.intValue();`, "Line 1: Cannot invoke intValue() on the primitive type int\n"},
		{"unboxed null compare", "a int", "boolean", true, `return a != null;`, "Line 1: Incompatible operand types int and null\n"},
		{"duplicate local", "a int", "int", false, `int x = 1; int x = 2; return x;`, "Line 1: Duplicate local variable x\n"},
		{"shadowed parameter", "a int", "int", false, `int a = 1; return a;`, "Line 1: Duplicate parameter a\n"},
		{"uninitialized", "a int", "int", false, `int x; if (a > 0) x = 1; return x;`, "Line 1: The local variable x may not have been initialized\n"},
		{"unreachable", "a int", "int", false, "return 1;\nreturn 2;", "Line 2: Unreachable code\n"},
		{"unreachable after loop", "a int", "int", false, "while (true) { }\nreturn 2;", "Line 2: Unreachable code\n"},
		{"bad operator", "a boolean, b int", "int", false, `return a + b;`, "Line 1: The operator + is undefined for the argument type(s) Boolean, Integer\n"},
		{"bad condition", "a int", "int", false, `if (a) return 1; return 0;`, "Line 1: Type mismatch: cannot convert from Integer to boolean\n"},
		{"bad cast", "s text", "int", false, `return (Integer) s;`, "Line 1: Cannot cast from String to Integer\n"},
		{"final reassigned", "a int", "int", false, `final int x = 1; x = 2; return x;`, "Line 1: The final local variable x may already have been assigned\n"},
		{"break outside loop", "a int", "int", false, `break;`, "Line 1: break cannot be used outside of a loop or a switch\n"},
		{"unhandled checked", "a int", "int", false, `throw new Exception("x");`, "Line 1: Unhandled exception type Exception\n"},
		{"throw non throwable", "a int", "int", false, `throw "x";`,
			"Line 1: No exception of type String can be thrown; an exception type must be a subclass of Throwable\n"},
		{"catch order", "a int", "int", false, `try { return 1; } catch (Exception e) { return 2; } catch (RuntimeException e) { return 3; }`,
			"Line 1: Unreachable catch block for RuntimeException. It is already handled by the catch block for Exception\n"},
		{"generic mismatch", "l list<int>", "int", false, `List<String> s = l; return 1;`,
			"Line 1: Type mismatch: cannot convert from List<Integer> to List<String>\n"},
		{"foreach non iterable", "m map<int, int>", "int", false, `for (Integer i : m) {} return 1;`,
			"Line 1: Can only iterate over an array or an instance of java.lang.Iterable\n"},
		{"foreach element type", "l list<text>", "int", false, `for (Integer i : l) {} return 1;`,
			"Line 1: Type mismatch: cannot convert from element type String to Integer\n"},
		{"big decimal needs its package", "d decimal", "decimal", false, `return BigDecimal.ONE;`,
			"Line 1: BigDecimal cannot be resolved to a variable\n"},
		{"unknown package", "a int", "int", false, `return java.io.File.separator.length();`, "Line 1: java.io.File cannot be resolved\n"},
		{"int literal range", "a int", "int", false, `return 2147483648;`, "Line 1: The literal 2147483648 of type int is out of range \n"},
		{"incompatible ==", "s text, a int", "boolean", false, `return s == a;`, "Line 1: Incompatible operand types String and Integer\n"},
		{"instantiate interface", "a int", "int", false, `List<Integer> l = new List<>(); return 1;`, "Line 1: Cannot instantiate the type List\n"},
		{"unknown constructor", "a int", "int", false, `StringBuilder b = new StringBuilder(1, 2); return 1;`,
			"Line 1: The constructor StringBuilder(int, int) is undefined\n"},
		{"switch on double", "a double", "int", true, `switch (a) { default: return 1; }`,
			"Line 1: Cannot switch on a value of type double. Only convertible int values, strings or enum variables are permitted\n"},
		{"duplicate case", "a int", "int", true, `switch (a) { case 1: return 1; case 1: return 2; } return 0;`, "Line 1: Duplicate case\n"},
		{"var null", "a int", "int", false, `var x = null; return 1;`, "Line 1: Cannot infer type for local variable initialized to 'null'\n"},
		{"static call of instance method", "s text", "int", false, `return String.length();`,
			"Line 1: Cannot make a static reference to the non-static method length() from the type String\n"},
		{"array index type", "a bigint", "int", false, `int[] x = new int[2]; return x[a];`,
			"Line 1: Type mismatch: cannot convert from Long to int\n"},
		// Constructs outside the subset, refused by name.
		{"thread", "a int", "int", false, `new Thread().start(); return 1;`, "Line 1: Thread is not supported by cqlpg user functions\n"},
		{"runtime", "a int", "int", false, `Runtime.getRuntime().exec("ls"); return 1;`, "Line 1: Runtime is not supported by cqlpg user functions\n"},
		{"system exit", "a int", "int", false, `System.exit(0); return 1;`, "Line 1: System.exit is not supported by cqlpg user functions\n"},
		{"system out", "a int", "int", false, `System.out.println(a); return 1;`, "Line 1: System.out is not supported by cqlpg user functions\n"},
		{"reflection", "s text", "text", false, `return s.getClass().getName();`, "Line 1: getClass() is not supported by cqlpg user functions\n"},
		{"class forName", "s text", "text", false, `Class.forName(s); return s;`, "Line 1: Class.forName is not supported by cqlpg user functions\n"},
		{"optional", "a int", "int", false, `Optional<Integer> o = Optional.of(a); return o.get();`,
			"Line 1: Optional is not supported by cqlpg user functions\n"},
		{"stream", "l list<int>", "int", false, `return (int) l.stream().count();`,
			"Line 1: streams are not supported by cqlpg user functions\n"},
		{"dns lookup", "s text", "text", false, `return java.net.InetAddress.getByName(s).toString();`,
			"Line 1: InetAddress.getByName is not supported by cqlpg user functions\n"},
		{"float to Double", "a float", "double", true, `return a;`, "Line 1: Type mismatch: cannot convert from float to Double\n"},
		{"keyword parameter", "new int", "int", false, `return 1;`,
			"Line 1: Syntax error on token \"new\", invalid VariableDeclaratorId\n"},
		{"unhandled parse exception", "s text", "bigint", false,
			`return new java.text.SimpleDateFormat("yyyy").parse(s).getTime();`,
			"Line 1: Unhandled exception type ParseException\n"},
		{"vector type", "v vector<float, 3>", "int", false, `return 1;`,
			"Line 1: vector<float, 3> values are not supported by cqlpg user functions\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			compile := Compile
			if c.strict {
				compile = CompileStrict
			}
			_, err := compile(params(t, c.params), cqlType(t, c.ret), c.body)
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a compile error", err)
			}
			if ce.Msg != "Java source compilation failed:\n"+c.want {
				t.Fatalf("got %q, want %q", ce.Msg, "Java source compilation failed:\n"+c.want)
			}
		})
	}
}
