package pgschema

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Function is a user-defined function: its signature, its body (Java,
// which the gateway's interpreter runs) and whether a null argument calls
// it or makes its result null.
type Function struct {
	Keyspace, Name    string
	ArgNames          []string
	ArgTypes          []*Type
	Returns           *Type
	CalledOnNullInput bool
	Language, Body    string
}

// Aggregate is a user-defined aggregate: a state function of its keyspace
// folded over the rows from an initial state, then a final function.
type Aggregate struct {
	Keyspace, Name string
	ArgTypes       []*Type
	StateFunc      string
	StateType      *Type
	FinalFunc      string // "" for none
	// InitCond is the initial state as a CQL literal ("" for none), as
	// system_schema.aggregates shows it.
	InitCond string
	Returns  *Type
}

// typeNames returns the types as CQL writes them.
func typeNames(types []*Type) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = t.String()
	}
	return out
}

// ArgTypeNames returns the function's argument types as CQL writes them.
func (f *Function) ArgTypeNames() []string { return typeNames(f.ArgTypes) }

// ArgTypeNames returns the aggregate's argument types as CQL writes them.
func (a *Aggregate) ArgTypeNames() []string { return typeNames(a.ArgTypes) }

// Signature returns "ks.f(int, text)", as Cassandra names an overload in
// its messages.
func (f *Function) Signature() string {
	return f.Keyspace + "." + f.Name + "(" + strings.Join(f.ArgTypeNames(), ", ") + ")"
}

// SameArgs reports whether types are the function's argument types.
func (f *Function) SameArgs(types []*Type) bool {
	return slices.EqualFunc(f.ArgTypes, types, (*Type).Equal)
}

// SameArgs reports whether types are the aggregate's argument types.
func (a *Aggregate) SameArgs(types []*Type) bool {
	return slices.EqualFunc(a.ArgTypes, types, (*Type).Equal)
}

// Function returns the keyspace's function name with argument types
// args, or nil.
func (k *Keyspace) Function(name string, args []*Type) *Function {
	for _, f := range k.Functions {
		if f.Name == name && f.SameArgs(args) {
			return f
		}
	}
	return nil
}

// Aggregate returns the keyspace's aggregate name with argument types
// args, or nil.
func (k *Keyspace) Aggregate(name string, args []*Type) *Aggregate {
	for _, a := range k.Aggregates {
		if a.Name == name && a.SameArgs(args) {
			return a
		}
	}
	return nil
}

// CreateStatement returns the CQL that creates the function, as DESCRIBE
// FUNCTION prints it (Cassandra 4.1's UDFunction.toCqlString).
func (f *Function) CreateStatement() string {
	var b strings.Builder
	b.WriteString("CREATE FUNCTION " + QuoteIdentifier(f.Keyspace) + "." + QuoteIdentifier(f.Name) + "(")
	for i, n := range f.ArgNames {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdentifier(n) + " " + f.ArgTypes[i].String())
	}
	b.WriteString(")\n    ")
	if f.CalledOnNullInput {
		b.WriteString("CALLED")
	} else {
		b.WriteString("RETURNS NULL")
	}
	fmt.Fprintf(&b, " ON NULL INPUT\n    RETURNS %s\n    LANGUAGE %s\n    AS $$%s$$;", f.Returns, f.Language, f.Body)
	return b.String()
}

// CreateStatement returns the CQL that creates the aggregate, as DESCRIBE
// AGGREGATE prints it.
func (a *Aggregate) CreateStatement() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE AGGREGATE %s.%s(%s)\n    SFUNC %s\n    STYPE %s", QuoteIdentifier(a.Keyspace), QuoteIdentifier(a.Name),
		strings.Join(a.ArgTypeNames(), ", "), QuoteIdentifier(a.StateFunc), a.StateType)
	if a.FinalFunc != "" {
		b.WriteString("\n    FINALFUNC " + QuoteIdentifier(a.FinalFunc))
	}
	if a.InitCond != "" {
		b.WriteString("\n    INITCOND " + a.InitCond)
	}
	b.WriteByte(';')
	return b.String()
}

// CreateFunction records a function, or replaces the one of its
// signature.
func CreateFunction(ctx context.Context, tx Querier, f *Function) error {
	_, err := tx.Exec(ctx, `INSERT INTO cqlpg.functions (keyspace_name, function_name, argument_types, argument_names,
		body, called_on_null_input, language, return_type) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (keyspace_name, function_name, argument_types) DO UPDATE SET argument_names = excluded.argument_names,
		body = excluded.body, called_on_null_input = excluded.called_on_null_input, language = excluded.language,
		return_type = excluded.return_type`,
		f.Keyspace, f.Name, f.ArgTypeNames(), f.ArgNames, f.Body, f.CalledOnNullInput, f.Language, f.Returns.String())
	return err
}

// DropFunction drops a function.
func DropFunction(ctx context.Context, tx Querier, f *Function) error {
	_, err := tx.Exec(ctx, `DELETE FROM cqlpg.functions WHERE keyspace_name = $1 AND function_name = $2 AND argument_types = $3`,
		f.Keyspace, f.Name, f.ArgTypeNames())
	return err
}

// CreateAggregate records an aggregate, or replaces the one of its
// signature.
func CreateAggregate(ctx context.Context, tx Querier, a *Aggregate) error {
	_, err := tx.Exec(ctx, `INSERT INTO cqlpg.aggregates (keyspace_name, aggregate_name, argument_types, state_func,
		state_type, final_func, initcond, return_type) VALUES ($1, $2, $3, $4, $5, NULLIF($6, ''), NULLIF($7, ''), $8)
		ON CONFLICT (keyspace_name, aggregate_name, argument_types) DO UPDATE SET state_func = excluded.state_func,
		state_type = excluded.state_type, final_func = excluded.final_func, initcond = excluded.initcond,
		return_type = excluded.return_type`,
		a.Keyspace, a.Name, a.ArgTypeNames(), a.StateFunc, a.StateType.String(), a.FinalFunc, a.InitCond, a.Returns.String())
	return err
}

// DropAggregate drops an aggregate.
func DropAggregate(ctx context.Context, tx Querier, a *Aggregate) error {
	_, err := tx.Exec(ctx, `DELETE FROM cqlpg.aggregates WHERE keyspace_name = $1 AND aggregate_name = $2 AND argument_types = $3`,
		a.Keyspace, a.Name, a.ArgTypeNames())
	return err
}

// loadFunctions reads the keyspaces' functions and aggregates. One whose
// types no longer parse is left out and reported.
func loadFunctions(ctx context.Context, q Querier, keyspaces map[string]*Keyspace, bad *unloadable) error {
	rows, err := q.Query(ctx, `SELECT keyspace_name, function_name, argument_types, argument_names, body,
		called_on_null_input, language, return_type FROM cqlpg.functions ORDER BY 1, 2, 3`)
	if err != nil {
		return fmt.Errorf("read functions: %w", err)
	}
	for rows.Next() {
		var ks, ret string
		var args []string
		f := &Function{}
		if err := rows.Scan(&ks, &f.Name, &args, &f.ArgNames, &f.Body, &f.CalledOnNullInput, &f.Language, &ret); err != nil {
			rows.Close()
			return fmt.Errorf("read functions: %w", err)
		}
		k := keyspaces[ks]
		if k == nil {
			continue
		}
		f.Keyspace = ks
		if f.ArgTypes, f.Returns, err = k.parseTypes(args, ret); err != nil {
			bad.add("function", ks, f.Name, err)
			continue
		}
		k.Functions = append(k.Functions, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = q.Query(ctx, `SELECT keyspace_name, aggregate_name, argument_types, state_func, state_type,
		coalesce(final_func, ''), coalesce(initcond, ''), return_type FROM cqlpg.aggregates ORDER BY 1, 2, 3`)
	if err != nil {
		return fmt.Errorf("read aggregates: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ks, st, ret string
		var args []string
		a := &Aggregate{}
		if err := rows.Scan(&ks, &a.Name, &args, &a.StateFunc, &st, &a.FinalFunc, &a.InitCond, &ret); err != nil {
			return fmt.Errorf("read aggregates: %w", err)
		}
		k := keyspaces[ks]
		if k == nil {
			continue
		}
		a.Keyspace = ks
		if a.ArgTypes, a.Returns, err = k.parseTypes(args, ret); err == nil {
			a.StateType, err = ParseType(st, k.resolveType)
		}
		if err != nil {
			bad.add("aggregate", ks, a.Name, err)
			continue
		}
		k.Aggregates = append(k.Aggregates, a)
	}
	return rows.Err()
}

// parseTypes reads argument and return types of the keyspace.
func (k *Keyspace) parseTypes(args []string, ret string) ([]*Type, *Type, error) {
	types := make([]*Type, len(args))
	for i, a := range args {
		t, err := ParseType(a, k.resolveType)
		if err != nil {
			return nil, nil, err
		}
		types[i] = t
	}
	r, err := ParseType(ret, k.resolveType)
	return types, r, err
}

// copyFunctions records the keyspace's functions and aggregates on a
// shard joining the cluster.
func copyFunctions(ctx context.Context, tx Querier, k *Keyspace) error {
	for _, f := range k.Functions {
		if err := CreateFunction(ctx, tx, f); err != nil {
			return fmt.Errorf("function %s: %w", f.Signature(), err)
		}
	}
	for _, a := range k.Aggregates {
		if err := CreateAggregate(ctx, tx, a); err != nil {
			return fmt.Errorf("aggregate %s.%s: %w", a.Keyspace, a.Name, err)
		}
	}
	return nil
}
