package udf

// The syntax tree of a body: the parser builds it, the compiler checks its
// types and turns it into closures. Every node keeps its source line for
// compile errors.

// node is any syntax tree node.
type node interface{ pos() int }

// expr is an expression node.
type expr interface {
	node
	isExpr()
}

// stmt is a statement node.
type stmt interface {
	node
	isStmt()
}

// at is the line a node starts on.
type at int

func (a at) pos() int { return int(a) }

// typeRef is a type as written: a possibly qualified name with type
// arguments and array dimensions, or a primitive type's keyword.
type typeRef struct {
	at
	name    string     // "int", "String", "java.util.List", "Map.Entry"
	args    []*typeRef // type arguments; nil when none were written
	diamond bool       // written with <> (new ArrayList<>())
	dims    int        // array dimensions
	wild    bool       // a wildcard (?, ? extends T)
}

type (
	// litExpr is a literal; tok keeps its kind and text.
	litExpr struct {
		at
		tok token
		neg bool // the literal is the operand of a unary minus (-2147483648)
	}
	// nameExpr is a simple name: a variable, or the start of a class name.
	nameExpr struct {
		at
		name string
	}
	// fieldExpr is x.name: a field, or a qualified name.
	fieldExpr struct {
		at
		x    expr
		name string
	}
	// callExpr is a method call, x.name(args) or name(args) without x.
	callExpr struct {
		at
		x    expr
		name string
		args []expr
	}
	// newExpr is new T(args).
	newExpr struct {
		at
		typ  *typeRef
		args []expr
	}
	// newArrayExpr is new T[n]... or new T[]{...}, or an array
	// initializer {...} in a declaration (typ then set from it).
	newArrayExpr struct {
		at
		typ  *typeRef // the array type
		dims []expr
		init []expr
		lit  bool // written with an initializer
	}
	// indexExpr is x[i].
	indexExpr struct {
		at
		x, i expr
	}
	// unaryExpr is a prefix operator: + - ! ~ ++ --.
	unaryExpr struct {
		at
		op string
		x  expr
	}
	// postfixExpr is x++ or x--.
	postfixExpr struct {
		at
		op string
		x  expr
	}
	// binaryExpr is x op y.
	binaryExpr struct {
		at
		op   string
		x, y expr
	}
	// assignExpr is x = y or a compound assignment x op= y.
	assignExpr struct {
		at
		op   string
		x, y expr
	}
	// condExpr is c ? x : y.
	condExpr struct {
		at
		c, x, y expr
	}
	// castExpr is (T) x.
	castExpr struct {
		at
		typ *typeRef
		x   expr
	}
	// instanceofExpr is x instanceof T.
	instanceofExpr struct {
		at
		x   expr
		typ *typeRef
	}
	// classLit is T.class.
	classLit struct {
		at
		typ *typeRef
	}
)

func (*litExpr) isExpr()        {}
func (*nameExpr) isExpr()       {}
func (*fieldExpr) isExpr()      {}
func (*callExpr) isExpr()       {}
func (*newExpr) isExpr()        {}
func (*newArrayExpr) isExpr()   {}
func (*indexExpr) isExpr()      {}
func (*unaryExpr) isExpr()      {}
func (*postfixExpr) isExpr()    {}
func (*binaryExpr) isExpr()     {}
func (*assignExpr) isExpr()     {}
func (*condExpr) isExpr()       {}
func (*castExpr) isExpr()       {}
func (*instanceofExpr) isExpr() {}
func (*classLit) isExpr()       {}

type (
	// blockStmt is { stmts }.
	blockStmt struct {
		at
		list []stmt
	}
	// localStmt declares local variables: [final] T a = x, b;
	localStmt struct {
		at
		final bool
		typ   *typeRef // nil for var
		vars  []*declarator
	}
	// exprStmt is an expression used as a statement.
	exprStmt struct {
		at
		x expr
	}
	ifStmt struct {
		at
		cond      expr
		then, els stmt
	}
	whileStmt struct {
		at
		cond expr
		body stmt
	}
	doStmt struct {
		at
		body stmt
		cond expr
	}
	forStmt struct {
		at
		init   []stmt
		cond   expr
		update []expr
		body   stmt
	}
	// foreachStmt is for (T name : x) body.
	foreachStmt struct {
		at
		final bool
		typ   *typeRef // nil for var
		name  string
		x     expr
		body  stmt
	}
	breakStmt    struct{ at }
	continueStmt struct{ at }
	returnStmt   struct {
		at
		x expr
	}
	throwStmt struct {
		at
		x expr
	}
	emptyStmt  struct{ at }
	assertStmt struct {
		at
		cond, msg expr
	}
	tryStmt struct {
		at
		body    *blockStmt
		catches []*catchClause
		finally *blockStmt
	}
	switchStmt struct {
		at
		x     expr
		cases []*switchCase
	}
)

// declarator is one variable of a local declaration.
type declarator struct {
	at
	name string
	dims int // extra array dimensions written after the name
	init expr
}

// catchClause is catch (T1 | T2 name) { body }.
type catchClause struct {
	at
	types []*typeRef
	name  string
	body  *blockStmt
}

// switchCase is case x: / default: and the statements after it.
type switchCase struct {
	at
	labels []expr // nil for default
	body   []stmt
}

func (*blockStmt) isStmt()    {}
func (*localStmt) isStmt()    {}
func (*exprStmt) isStmt()     {}
func (*ifStmt) isStmt()       {}
func (*whileStmt) isStmt()    {}
func (*doStmt) isStmt()       {}
func (*forStmt) isStmt()      {}
func (*foreachStmt) isStmt()  {}
func (*breakStmt) isStmt()    {}
func (*continueStmt) isStmt() {}
func (*returnStmt) isStmt()   {}
func (*throwStmt) isStmt()    {}
func (*emptyStmt) isStmt()    {}
func (*assertStmt) isStmt()   {}
func (*tryStmt) isStmt()      {}
func (*switchStmt) isStmt()   {}
