package translate

import (
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// planSelectors resolves the selection into slots, output expressions and
// result metadata.
func (p *planner) planSelectors(plan *Select, s *SelectStmt) error {
	t := plan.Table
	if s.Selectors == nil {
		for _, c := range t.Columns {
			plan.output(c.Name, &SlotRef{Slot: plan.slot(SlotValue, c), T: c.Type})
		}
		return p.planJSON(plan)
	}
	for _, sel := range s.Selectors {
		e, name, err := p.selector(plan, sel.Expr)
		if err != nil {
			return err
		}
		if isAggregate(e) {
			plan.Aggregate = true
		}
		plan.output(or(sel.Alias, name), e)
	}
	return p.planJSON(plan)
}

// planJSON turns the outputs into the one [json] column of SELECT JSON,
// keyed by the result column names.
func (p *planner) planJSON(plan *Select) error {
	if !plan.JSON {
		return nil
	}
	for _, r := range plan.Result {
		plan.JSONNames = append(plan.JSONNames, jsonKey(r.Name))
	}
	plan.Result = []ColumnSpec{{Keyspace: plan.Table.Keyspace, Table: plan.Table.Name, Name: "[json]",
		Type: pgschema.Scalar(pgschema.Text)}}
	return nil
}

// jsonKey is the key SELECT JSON gives a column: its name, double-quoted
// when it is not all lower case, as Cassandra does.
func jsonKey(name string) string {
	if strings.ToLower(name) == name {
		return name
	}
	return `"` + name + `"`
}

// selector resolves one selector expression, returning it and the name
// Cassandra gives its result column.
func (p *planner) selector(plan *Select, se SelectorExpr) (Expr, string, error) {
	t := plan.Table
	switch e := se.(type) {
	case *ColumnSelector:
		c, err := column(t, e.Name)
		if err != nil {
			return nil, "", err
		}
		return &SlotRef{Slot: plan.slot(SlotValue, c), T: c.Type}, c.Name, nil
	case *CallSelector:
		return p.callSelector(plan, e)
	case *CastSelector:
		arg, name, err := p.selector(plan, e.Expr)
		if err != nil {
			return nil, "", err
		}
		fn, err := CastFunction(arg.Type(), e.Type, p.firstColumn(plan))
		if err != nil {
			return nil, "", err
		}
		if fn == nil { // a cast to the same type leaves the selector alone
			return arg, name, nil
		}
		return &CallExpr{Fn: fn, Args: []Expr{arg}}, fn.ColumnName([]string{name}), nil
	case *FieldSelector:
		arg, name, err := p.selector(plan, e.Expr)
		if err != nil {
			return nil, "", err
		}
		u := arg.Type()
		if u.Kind != pgschema.UDT {
			return nil, "", invalidf("Invalid field selection: %s of type %s is not a user type", name, u)
		}
		for i, f := range u.Fields {
			if f == e.Field {
				return &FieldRef{Arg: arg, Index: i, T: u.Elem[i]}, name + "." + e.Field, nil
			}
		}
		return nil, "", invalidf("%s of type %s has no field %s", name, u, e.Field)
	case *ElementSelector:
		return p.elementSelector(plan, e)
	case *TermSelector:
		hint, ok := e.Term.(*TypeHint)
		if !ok {
			return nil, "", invalidf("Cannot infer type for term %s in selection clause (try using a cast to force a type)", termString(e.Term))
		}
		v, err := p.value(hint.Term, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: termString(hint.Term), Type: hint.Type})
		if err != nil {
			return nil, "", err
		}
		return &ConstExpr{Value: v, T: hint.Type}, "(" + hint.Type.String() + ")" + termString(hint.Term), nil
	}
	return nil, "", invalidf("this kind of selector is not supported")
}

// firstColumn names the first column the selection reads, which
// Cassandra's refused casts name.
func (p *planner) firstColumn(plan *Select) string {
	for _, sl := range plan.Slots {
		if sl.Column != nil {
			return sl.Column.Name
		}
	}
	return ""
}

// callSelector resolves token(), writetime(), ttl(), aggregates and
// functions.
func (p *planner) callSelector(plan *Select, e *CallSelector) (Expr, string, error) {
	t := plan.Table
	name := strings.ToLower(e.Name)
	switch name {
	case "token":
		return p.tokenSelector(plan, e)
	case "writetime", "ttl":
		if len(e.Args) != 1 {
			return nil, "", invalidf("Invalid number of arguments in call to function %s: 1 required but %d provided", name, len(e.Args))
		}
		cs, ok := e.Args[0].(*ColumnSelector)
		if !ok {
			return nil, "", invalidf("Only column names are supported as arguments of %s", name)
		}
		c, err := column(t, cs.Name)
		if err != nil {
			return nil, "", err
		}
		fn := name
		switch {
		case c.IsKey() || t.Virtual:
			return nil, "", invalidf("Cannot use selection function %s on PRIMARY KEY part %s", fn, c.Name)
		case c.Type.IsMultiCell():
			return nil, "", invalidf("Cannot use selection function %s on non-frozen %s %s", fn, collectionWord(c.Type), c.Name)
		}
		// Result column names hold column names unquoted, as Cassandra's.
		if name == "writetime" {
			return &SlotRef{Slot: plan.slot(SlotWritetime, c), T: pgschema.Scalar(pgschema.Bigint)}, "writetime(" + c.Name + ")", nil
		}
		return &SlotRef{Slot: plan.slot(SlotTTL, c), T: pgschema.Scalar(pgschema.Int)}, "ttl(" + c.Name + ")", nil
	}
	// Literals and markers take their types from the function: their
	// args stay nil, and terms holds them.
	var args []Expr
	var terms []Term
	var fargs []FuncArg
	var names []string
	for _, a := range e.Args {
		if ts, ok := a.(*TermSelector); ok {
			switch term := ts.Term.(type) {
			case *Literal:
				args, terms = append(args, nil), append(terms, term)
				fargs = append(fargs, FuncArg{Literal: term})
				names = append(names, termString(term))
				continue
			case *Marker:
				args, terms = append(args, nil), append(terms, term)
				fargs = append(fargs, FuncArg{Marker: true})
				names = append(names, termString(term))
				continue
			case *Collection:
				// A collection or vector literal: its type is the
				// parameter's, when the function can tell it.
				args, terms = append(args, nil), append(terms, term)
				fargs = append(fargs, FuncArg{Text: termString(term)})
				names = append(names, termString(term))
				continue
			}
		}
		ae, an, err := p.selector(plan, a)
		if err != nil {
			return nil, "", err
		}
		args, terms = append(args, ae), append(terms, nil)
		fargs = append(fargs, FuncArg{Type: ae.Type(), Text: an})
		names = append(names, an)
	}
	if e.Star {
		names = []string{"*"}
	}
	if p.isAggregate(e.Name) {
		for _, a := range args {
			if a != nil && isAggregate(a) {
				return nil, "", invalidf("aggregate functions cannot be used as arguments of aggregate functions")
			}
		}
		agg, err := p.resolveAggregate(e.Name, fargs)
		if err != nil {
			return nil, "", err
		}
		if agg == cqlfunc.CountRows {
			// count(1) is count(*): the constant is not an argument.
			return &AggExpr{Agg: agg}, agg.ColumnName(names), nil
		}
		if err := p.constantArgs(plan, args, terms, agg.Args); err != nil {
			return nil, "", err
		}
		return &AggExpr{Agg: agg, Args: args}, agg.ColumnName(names), nil
	}
	fn, err := p.resolveFunction(e.Name, fargs, nil)
	if err != nil {
		return nil, "", err
	}
	if err := p.constantArgs(plan, args, terms, fn.Args); err != nil {
		return nil, "", err
	}
	return &CallExpr{Fn: fn, Args: args}, fn.ColumnName(names), nil
}

// constantArgs types the literal arguments of a call by the parameters of
// the chosen overload.
func (p *planner) constantArgs(plan *Select, args []Expr, terms []Term, params []*pgschema.Type) error {
	t := plan.Table
	for i, a := range args {
		if a != nil {
			continue
		}
		v, err := p.value(terms[i], ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: termString(terms[i]), Type: params[i]})
		if err != nil {
			return err
		}
		args[i] = &ConstExpr{Value: v, T: params[i]}
	}
	return nil
}

func collectionWord(t *pgschema.Type) string {
	if t.Kind == pgschema.UDT {
		return "UDT"
	}
	return "collection"
}

// tokenSelector resolves token(): of the partition key itself it reads the
// stored token; of other columns it hashes them as a partition key would.
func (p *planner) tokenSelector(plan *Select, e *CallSelector) (Expr, string, error) {
	t := plan.Table
	var cols []*pgschema.Column
	names := make([]string, len(e.Args))
	for i, a := range e.Args {
		cs, ok := a.(*ColumnSelector)
		if !ok {
			return nil, "", invalidf("cqlfunc.Function token takes only columns as arguments here")
		}
		c, err := column(t, cs.Name)
		if err != nil {
			return nil, "", err
		}
		cols = append(cols, c)
		names[i] = c.Name
	}
	name := "system.token(" + strings.Join(names, ", ") + ")"
	if !t.Virtual && sameColumns(cols, t.PartitionKey) {
		return &SlotRef{Slot: plan.slot(SlotToken, nil), T: pgschema.Scalar(pgschema.Bigint)}, name, nil
	}
	slots := make([]int, len(cols))
	for i, c := range cols {
		slots[i] = plan.slot(SlotValue, c)
	}
	return &TokenOf{Slots: slots}, name, nil
}

func sameColumns(a, b []*pgschema.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// elementSelector resolves m[key] and s[element], and the slices
// m[from..to] and s[from..to].
func (p *planner) elementSelector(plan *Select, e *ElementSelector) (Expr, string, error) {
	t := plan.Table
	arg, name, err := p.selector(plan, e.Expr)
	if err != nil {
		return nil, "", err
	}
	ct := arg.Type()
	switch {
	case !ct.IsCollection() && e.Slice:
		return nil, "", invalidf("Invalid slice selection: %s of type %s is not a collection", name, ct)
	case !ct.IsCollection():
		return nil, "", invalidf("Invalid element selection: %s is of type %s is not a collection", name, ct)
	case ct.Kind == pgschema.List && e.Slice:
		return nil, "", invalidf("Slice selection is only allowed on sets and maps, but %s is a list", name)
	case ct.Kind == pgschema.List:
		return nil, "", invalidf("Element selection is only allowed on sets and maps, but %s is a list", name)
	}
	keyType, resType := ct.Elem[0], ct.Elem[len(ct.Elem)-1]
	bound := func(term Term) (Expr, string, error) {
		if term == nil {
			return nil, "", nil
		}
		v, err := p.value(term, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "key(" + name + ")", Type: keyType})
		if err != nil {
			return nil, "", err
		}
		return &ConstExpr{Value: v, T: keyType}, termString(term), nil
	}
	if e.Slice {
		from, fromText, err := bound(e.From)
		if err != nil {
			return nil, "", err
		}
		to, toText, err := bound(e.To)
		if err != nil {
			return nil, "", err
		}
		return &SliceRef{Arg: arg, From: from, To: to}, name + "[" + fromText + ".." + toText + "]", nil
	}
	v, err := p.value(e.Key, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "key(" + name + ")", Type: keyType})
	if err != nil {
		return nil, "", err
	}
	return &ElementRef{Arg: arg, Key: &ConstExpr{Value: v, T: keyType}, T: resType}, name + "[" + termString(e.Key) + "]", nil
}
