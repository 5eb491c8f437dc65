package migrate

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Statement is one schema change the import makes on the target.
type Statement struct {
	What string // "keyspace shop", "table shop.orders", ...
	CQL  string
}

// SchemaPlan is what importing a schema does: the statements, in the
// order they run, and notes on what it leaves as it is or cannot carry.
type SchemaPlan struct {
	Statements []Statement
	Notes      []string
}

// PlanSchema plans creating origin's keyspaces, types, tables and indexes
// on target, whose datacenters are targetDCs, mapping the origin's
// datacenters by dcMap (origin name to target name; a datacenter it does
// not name keeps its name). Anything that stops the import is found here,
// before any write, and returned together as one error: a mapping that
// names a datacenter neither side has, a keyspace replicated to a
// datacenter the target lacks, a type or table that exists on the target
// with another definition.
func PlanSchema(origin, target *Schema, targetDCs []string, dcMap map[string]string) (*SchemaPlan, error) {
	var errs []error
	for _, from := range sortedKeys(dcMap) {
		to := dcMap[from]
		if !slices.Contains(origin.Datacenters, from) {
			errs = append(errs, fmt.Errorf("--dc-map %s=%s: the origin has no datacenter %s (its datacenters: %s)",
				from, to, from, strings.Join(origin.Datacenters, ", ")))
		}
		if !slices.Contains(targetDCs, to) {
			errs = append(errs, fmt.Errorf("--dc-map %s=%s: the target has no datacenter %s (its datacenters: %s)",
				from, to, to, strings.Join(targetDCs, ", ")))
		}
	}
	targetKS := map[string]*Keyspace{}
	for _, ks := range target.Keyspaces {
		targetKS[ks.Name] = ks
	}
	p := &SchemaPlan{}
	for _, ks := range origin.Keyspaces {
		name := pgschema.QuoteIdentifier(ks.Name)
		have := targetKS[ks.Name]
		rep, err := mapReplication(ks, targetDCs, dcMap)
		if err != nil {
			errs = append(errs, err)
		}
		if have == nil {
			p.add("keyspace "+name, fmt.Sprintf("CREATE KEYSPACE %s WITH replication = %s AND durable_writes = %t",
				name, pgschema.MapLiteral(rep), ks.DurableWrites))
			have = &Keyspace{}
		} else {
			p.Notes = append(p.Notes, "keyspace "+name+" exists on the target: its replication is left as it is")
		}
		types, err := typeOrder(ks.Types)
		if err != nil {
			errs = append(errs, fmt.Errorf("keyspace %s: %w", name, err))
		}
		for _, t := range types {
			qn := name + "." + pgschema.QuoteIdentifier(t.Name)
			i := slices.IndexFunc(have.Types, func(o *UserType) bool { return o.Name == t.Name })
			if i < 0 {
				p.add("type "+qn, createType(qn, t))
				continue
			}
			if o := have.Types[i]; !slices.Equal(o.Fields, t.Fields) || !slices.Equal(o.FieldTypes, t.FieldTypes) {
				errs = append(errs, fmt.Errorf("type %s exists on the target with other fields (origin: %s; target: %s): "+
					"drop it on the target, or leave keyspace %s out of --keyspaces", qn, fields(t), fields(o), name))
				continue
			}
			p.Notes = append(p.Notes, "type "+qn+" exists on the target with the same fields")
		}
		for _, f := range ks.Functions {
			sig := name + "." + pgschema.QuoteIdentifier(f.Name) + "(" + strings.Join(f.ArgTypes, ", ") + ")"
			if slices.ContainsFunc(have.Functions, func(o *Function) bool { return o.Name == f.Name && slices.Equal(o.ArgTypes, f.ArgTypes) }) {
				p.Notes = append(p.Notes, "function "+sig+" exists on the target: it is left as it is")
				continue
			}
			p.add("function "+sig, createFunction(name, f))
		}
		for _, a := range ks.Aggregates {
			sig := name + "." + pgschema.QuoteIdentifier(a.Name) + "(" + strings.Join(a.ArgTypes, ", ") + ")"
			if slices.ContainsFunc(have.Aggregates, func(o *Aggregate) bool { return o.Name == a.Name && slices.Equal(o.ArgTypes, a.ArgTypes) }) {
				p.Notes = append(p.Notes, "aggregate "+sig+" exists on the target: it is left as it is")
				continue
			}
			p.add("aggregate "+sig, createAggregate(name, a))
		}
		for _, t := range ks.Tables {
			qn := name + "." + pgschema.QuoteIdentifier(t.Name)
			i := slices.IndexFunc(have.Tables, func(o *Table) bool { return o.Name == t.Name })
			var existing []Index
			if i < 0 {
				p.add("table "+qn, createTable(qn, t))
			} else if diff := sameTable(t, have.Tables[i]); diff != "" {
				errs = append(errs, fmt.Errorf("table %s exists on the target with other columns or keys (%s): "+
					"drop it on the target, or leave keyspace %s out of --keyspaces", qn, diff, name))
				continue
			} else {
				p.Notes = append(p.Notes, "table "+qn+" exists on the target with the same columns and keys")
				existing = have.Tables[i].Indexes
			}
			for _, idx := range t.Indexes {
				if slices.ContainsFunc(existing, func(o Index) bool { return o.Name == idx.Name }) {
					continue
				}
				p.add("index "+name+"."+pgschema.QuoteIdentifier(idx.Name), createIndex(qn, idx))
			}
		}
		for _, v := range ks.Views {
			qn := name + "." + pgschema.QuoteIdentifier(v.Name)
			if slices.ContainsFunc(have.Views, func(o *View) bool { return o.Name == v.Name }) {
				p.Notes = append(p.Notes, "materialized view "+qn+" exists on the target: it is left as it is")
				continue
			}
			p.add("materialized view "+qn, createView(name, v))
		}
		for _, u := range ks.Uncarried {
			p.Notes = append(p.Notes, "not carried: "+u+" (cqlpg runs functions in Java only, and has no triggers)")
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

func (p *SchemaPlan) add(what, cql string) {
	p.Statements = append(p.Statements, Statement{What: what, CQL: cql})
}

// mapReplication returns a keyspace's replication on the target: a
// NetworkTopologyStrategy's datacenters renamed by dcMap, each of which
// the target must have.
func mapReplication(ks *Keyspace, targetDCs []string, dcMap map[string]string) (map[string]string, error) {
	if !strings.HasSuffix(ks.Replication["class"], "NetworkTopologyStrategy") {
		return ks.Replication, nil
	}
	out := map[string]string{}
	from := map[string]string{}
	var errs []error
	for _, k := range sortedKeys(ks.Replication) {
		v := ks.Replication[k]
		if k == "class" || k == "replication_factor" {
			out[k] = v
			continue
		}
		to := k
		if m, ok := dcMap[k]; ok {
			to = m
		}
		if !slices.Contains(targetDCs, to) {
			errs = append(errs, fmt.Errorf("keyspace %s is replicated to datacenter %s, which the target does not have "+
				"(its datacenters: %s): map it with --dc-map %s=DATACENTER", pgschema.QuoteIdentifier(ks.Name), k,
				strings.Join(targetDCs, ", "), k))
			continue
		}
		if other, ok := from[to]; ok {
			errs = append(errs, fmt.Errorf("keyspace %s: datacenters %s and %s both map to %s on the target",
				pgschema.QuoteIdentifier(ks.Name), other, k, to))
			continue
		}
		from[to] = k
		out[to] = v
	}
	return out, errors.Join(errs...)
}

// identifier matches the names in a CQL type: bare words and quoted ones.
var identifier = regexp.MustCompile(`"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_]*`)

// typeOrder orders a keyspace's types so that each comes after the types
// its fields use.
func typeOrder(types []*UserType) ([]*UserType, error) {
	byName := map[string]*UserType{}
	for _, t := range types {
		byName[t.Name] = t
	}
	var out []*UserType
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(t *UserType) error
	visit = func(t *UserType) error {
		switch state[t.Name] {
		case 1:
			return fmt.Errorf("type %s refers to itself", pgschema.QuoteIdentifier(t.Name))
		case 2:
			return nil
		}
		state[t.Name] = 1
		for _, ft := range t.FieldTypes {
			for _, w := range identifier.FindAllString(ft, -1) {
				if strings.HasPrefix(w, `"`) {
					w = strings.ReplaceAll(w[1:len(w)-1], `""`, `"`)
				}
				if dep := byName[w]; dep != nil && dep != t {
					if err := visit(dep); err != nil {
						return err
					}
				}
			}
		}
		state[t.Name] = 2
		out = append(out, t)
		return nil
	}
	for _, t := range types {
		if err := visit(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func fields(t *UserType) string {
	var parts []string
	for i, f := range t.Fields {
		parts = append(parts, pgschema.QuoteIdentifier(f)+" "+t.FieldTypes[i])
	}
	return strings.Join(parts, ", ")
}

func createType(name string, t *UserType) string {
	return "CREATE TYPE " + name + " (" + fields(t) + ")"
}

func createTable(name string, t *Table) string {
	var b strings.Builder
	var pk, ck, order []string
	b.WriteString("CREATE TABLE " + name + " (")
	for _, c := range t.Columns {
		n := pgschema.QuoteIdentifier(c.Name)
		b.WriteString(n + " " + c.Type)
		if c.Kind == "static" {
			b.WriteString(" STATIC")
		}
		b.WriteString(", ")
		switch c.Kind {
		case "partition_key":
			pk = append(pk, n)
		case "clustering":
			ck = append(ck, n)
			order = append(order, n+" "+strings.ToUpper(c.Order))
		}
	}
	b.WriteString("PRIMARY KEY ((" + strings.Join(pk, ", ") + ")")
	for _, c := range ck {
		b.WriteString(", " + c)
	}
	b.WriteString("))")
	var with []string
	if len(order) > 0 {
		with = append(with, "CLUSTERING ORDER BY ("+strings.Join(order, ", ")+")")
	}
	for _, o := range sortedKeys(t.Options) {
		with = append(with, o+" = "+t.Options[o])
	}
	if len(with) > 0 {
		b.WriteString(" WITH " + strings.Join(with, " AND "))
	}
	return b.String()
}

// createFunction returns the CREATE FUNCTION of f, in keyspace ks
// (quoted); its body goes between $$, or quoted when it holds $$.
func createFunction(ks string, f *Function) string {
	args := make([]string, len(f.ArgNames))
	for i, n := range f.ArgNames {
		args[i] = pgschema.QuoteIdentifier(n) + " " + unfrozenTuple(f.ArgTypes[i])
	}
	null := "RETURNS NULL"
	if f.CalledOnNullInput {
		null = "CALLED"
	}
	body := "$$" + f.Body + "$$"
	if strings.Contains(f.Body, "$$") {
		body = pgschema.QuoteString(f.Body)
	}
	return fmt.Sprintf("CREATE FUNCTION %s.%s(%s) %s ON NULL INPUT RETURNS %s LANGUAGE %s AS %s", ks, pgschema.QuoteIdentifier(f.Name),
		strings.Join(args, ", "), null, unfrozenTuple(f.Returns), f.Language, body)
}

// unfrozenTuple writes a tuple type as CREATE FUNCTION takes it: tuples
// are frozen, and system_schema says so, but a function's types may not
// say frozen.
func unfrozenTuple(t string) string {
	if strings.HasPrefix(t, "frozen<tuple<") && strings.HasSuffix(t, ">") {
		return strings.TrimSuffix(strings.TrimPrefix(t, "frozen<"), ">")
	}
	return t
}

// createAggregate returns the CREATE AGGREGATE of a, in keyspace ks
// (quoted).
func createAggregate(ks string, a *Aggregate) string {
	q := fmt.Sprintf("CREATE AGGREGATE %s.%s(%s) SFUNC %s STYPE %s", ks, pgschema.QuoteIdentifier(a.Name), strings.Join(a.ArgTypes, ", "),
		pgschema.QuoteIdentifier(a.StateFunc), a.StateType)
	if a.FinalFunc != "" {
		q += " FINALFUNC " + pgschema.QuoteIdentifier(a.FinalFunc)
	}
	if a.Init != "" {
		q += " INITCOND " + a.Init
	}
	return q
}

// createView returns the CREATE MATERIALIZED VIEW of v, in keyspace ks
// (quoted).
func createView(ks string, v *View) string {
	var pk, ck, order, cols []string
	for _, c := range v.Columns {
		n := pgschema.QuoteIdentifier(c.Name)
		cols = append(cols, n)
		switch c.Kind {
		case "partition_key":
			pk = append(pk, n)
		case "clustering":
			ck = append(ck, n)
			order = append(order, n+" "+strings.ToUpper(c.Order))
		}
	}
	sel := "*"
	if !v.IncludeAll {
		sel = strings.Join(cols, ", ")
	}
	q := fmt.Sprintf("CREATE MATERIALIZED VIEW %s.%s AS SELECT %s FROM %s.%s WHERE %s PRIMARY KEY ((%s)",
		ks, pgschema.QuoteIdentifier(v.Name), sel, ks, pgschema.QuoteIdentifier(v.Base), v.Where, strings.Join(pk, ", "))
	for _, c := range ck {
		q += ", " + c
	}
	q += ")"
	var with []string
	if len(order) > 0 {
		with = append(with, "CLUSTERING ORDER BY ("+strings.Join(order, ", ")+")")
	}
	for _, o := range sortedKeys(v.Options) {
		with = append(with, o+" = "+v.Options[o])
	}
	if len(with) > 0 {
		q += " WITH " + strings.Join(with, " AND ")
	}
	return q
}

func createIndex(table string, idx Index) string {
	target := idx.Options["target"]
	name := pgschema.QuoteIdentifier(idx.Name)
	if idx.Kind != "CUSTOM" {
		return fmt.Sprintf("CREATE INDEX %s ON %s (%s)", name, table, target)
	}
	opts := map[string]string{}
	for k, v := range idx.Options {
		if k != "target" && k != "class_name" {
			opts[k] = v
		}
	}
	q := fmt.Sprintf("CREATE CUSTOM INDEX %s ON %s (%s) USING %s", name, table, target, pgschema.QuoteString(idx.Options["class_name"]))
	if len(opts) > 0 {
		q += " WITH OPTIONS = " + pgschema.MapLiteral(opts)
	}
	return q
}

// CheckTables reports, together, each of the origin's tables (of ks) that
// the target lacks or holds with other columns or keys.
func CheckTables(ks *Keyspace, tables []*Table, target *Schema) error {
	var errs []error
	name := pgschema.QuoteIdentifier(ks.Name)
	i := slices.IndexFunc(target.Keyspaces, func(k *Keyspace) bool { return k.Name == ks.Name })
	for _, t := range tables {
		qn := name + "." + pgschema.QuoteIdentifier(t.Name)
		var have *Table
		if i >= 0 {
			if j := slices.IndexFunc(target.Keyspaces[i].Tables, func(o *Table) bool { return o.Name == t.Name }); j >= 0 {
				have = target.Keyspaces[i].Tables[j]
			}
		}
		if have == nil {
			errs = append(errs, fmt.Errorf("table %s does not exist on the target: create it first (cqlpg migrate schema)", qn))
		} else if diff := sameTable(t, have); diff != "" {
			errs = append(errs, fmt.Errorf("table %s has other columns or keys on the target (%s)", qn, diff))
		}
	}
	return errors.Join(errs...)
}
