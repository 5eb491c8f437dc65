package translate

import (
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// writeKeys checks the WHERE clause of an UPDATE or DELETE of whole rows:
// every key column restricted by = or IN, and nothing else; a write of
// static columns only names the partition key alone.
func (p *planner) writeKeys(t *pgschema.Table, where []Relation, verb string, onlyStatic bool) ([]Restriction, error) {
	r, err := p.keyRestrictions(t, where, verb)
	if err != nil {
		return nil, err
	}
	keys := make([]Restriction, len(t.KeyColumns()))
	for i, rs := range r.partition {
		if len(rs) > 0 {
			keys[i] = rs[0]
		}
	}
	if onlyStatic && r.hasClustering() {
		return nil, invalidf("Invalid restrictions on clustering columns since the %s statement modifies only static columns", verb)
	}
	for i, rs := range r.cluster {
		if len(rs) > 0 && rs[0].Op != OpEQ && rs[0].Op != OpIN {
			return nil, invalidf("Slice restrictions are not supported on the clustering columns in %s statements", verb)
		}
		if len(rs) > 0 {
			keys[len(t.PartitionKey)+i] = rs[0]
		}
	}
	if onlyStatic {
		keys = keys[:len(t.PartitionKey)]
	}
	if err := missingKeys(t, keys); err != nil {
		return nil, err
	}
	return keys, r.checkKeysOnly()
}

// keyRestrictions resolves the WHERE clause of a write, refusing what
// writes may not restrict.
func (p *planner) keyRestrictions(t *pgschema.Table, where []Relation, verb string) (*restrictions, error) {
	r, err := p.restrict(t, where, false)
	if err != nil {
		return nil, err
	}
	if len(r.token) > 0 {
		return nil, invalidf("The token function cannot be used in WHERE clauses for %s statements", verb)
	}
	var pk []string
	for i, rs := range r.partition {
		if len(rs) == 0 {
			pk = append(pk, t.PartitionKey[i].Name)
		}
	}
	if len(pk) > 0 {
		return nil, invalidf("Some partition key parts are missing: %s", strings.Join(pk, ", "))
	}
	for _, rs := range r.partition {
		if rs[0].Op != OpEQ && rs[0].Op != OpIN {
			return nil, invalidf("Only EQ and IN relation are supported on the partition key (unless you use the token() function) for %s statements", verb)
		}
	}
	if err := p.spreadTuples(r, verb); err != nil {
		return nil, err
	}
	return r, nil
}

// spreadTuples turns a write's multi-column relations into the
// restrictions of single clustering columns that its keys are made of:
// (c1, c2) = (...) and (c1, c2) IN (...) stay whole on c1, the columns
// after it marked as part of it (the executor's key product takes the
// tuples together, an = as an IN of one tuple). Slices of tuples are
// kept, in tupleSlices, for a DELETE's range.
func (p *planner) spreadTuples(r *restrictions, verb string) error {
	for _, tr := range r.tuples {
		switch tr.Op {
		case OpEQ, OpIN:
			whole := tr
			whole.Column = tr.Columns[0]
			if tr.Op == OpEQ {
				whole.Tuples, whole.Values = [][]Value{tr.Values}, nil
			}
			r.cluster[whole.Column.Position] = []Restriction{whole}
			for _, c := range tr.Columns[1:] {
				r.cluster[c.Position] = []Restriction{{Kind: OnTuple, Column: c, Op: OpIN}}
			}
		case OpLT, OpLTE, OpGT, OpGTE:
			if verb != "DELETE" {
				return invalidf("Slice restrictions are not supported on the clustering columns in %s statements", verb)
			}
			// A range deletion: deleteRestrictions takes it.
			r.tupleSlices = append(r.tupleSlices, tr)
			continue
		default:
			return invalidf("Multi-column relations are not supported in %s statements", verb)
		}
	}
	r.tuples = nil
	return nil
}

// checkKeysOnly refuses a write's restrictions on columns outside the
// primary key, which Cassandra checks after those on the key.
func (r *restrictions) checkKeysOnly() error {
	if len(r.others) == 0 {
		return nil
	}
	var names []string
	for _, o := range r.others {
		if !slices.Contains(names, o.Column.Name) {
			names = append(names, o.Column.Name)
		}
	}
	return invalidf("Non PRIMARY KEY columns found in where clause: %s ", strings.Join(names, ", "))
}

// deleteKeys is what a DELETE's WHERE clause names: the partition key and
// a prefix of the clustering columns by = or IN, and maybe a slice of the
// next clustering column.
type deleteKeys struct {
	keys   []Restriction
	slice  []Restriction
	tuples []Restriction
}

func (p *planner) deleteRestrictions(t *pgschema.Table, where []Relation, onlyStatic bool) (*deleteKeys, error) {
	r, err := p.keyRestrictions(t, where, "DELETE")
	if err != nil {
		return nil, err
	}
	d := &deleteKeys{}
	for _, rs := range r.partition {
		d.keys = append(d.keys, rs[0])
	}
	if onlyStatic && r.hasClustering() {
		return nil, invalidf("Invalid restrictions on clustering columns since the DELETE statement modifies only static columns")
	}
	if err := r.checkClusteringRestricted(); err != nil {
		return nil, err
	}
	if err := r.checkKeysOnly(); err != nil {
		return nil, err
	}
	for _, rs := range r.cluster {
		if len(rs) == 0 {
			break
		}
		if rs[0].Op.IsSlice() {
			d.slice = rs
			break
		}
		d.keys = append(d.keys, rs[0])
	}
	if len(r.tupleSlices) == 0 {
		return d, nil
	}
	// One tuple slice, or a lower and an upper one on the same columns,
	// right after the prefix fixed by = (a range deletion's shape).
	ts := r.tupleSlices
	first := ts[0].Columns[0].Position
	supported := d.slice == nil && first == len(d.keys)-len(t.PartitionKey) && len(ts) <= 2
	if len(ts) == 2 {
		if ts[0].Op == OpLT || ts[0].Op == OpLTE {
			ts[0], ts[1] = ts[1], ts[0]
		}
		supported = supported && (ts[0].Op == OpGT || ts[0].Op == OpGTE) && (ts[1].Op == OpLT || ts[1].Op == OpLTE) &&
			slices.Equal(ts[0].Columns, ts[1].Columns)
	}
	if !supported {
		return nil, invalidf("Multi-column relations are not supported in DELETE statements")
	}
	d.tuples = ts
	return d, nil
}

// missingKeys names the key columns a write leaves unrestricted.
func missingKeys(t *pgschema.Table, keys []Restriction) error {
	var pk, ck []string
	for i, c := range t.KeyColumns()[:len(keys)] {
		if keys[i].Column == nil {
			if c.Kind == pgschema.PartitionKey {
				pk = append(pk, c.Name)
			} else {
				ck = append(ck, c.Name)
			}
		}
	}
	if len(pk) > 0 {
		return invalidf("Some partition key parts are missing: %s", strings.Join(pk, ", "))
	}
	if len(ck) > 0 {
		return invalidf("Some clustering keys are missing: %s", strings.Join(ck, ", "))
	}
	return nil
}

// using plans USING TIMESTAMP and TTL.
func (p *planner) using(w *Write, u Using) error {
	t := w.Table
	if u.Timestamp != nil {
		v, err := p.value(u.Timestamp, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "[timestamp]",
			Type: pgschema.Scalar(pgschema.Bigint)})
		if err != nil {
			return err
		}
		w.Timestamp = &v
	}
	if u.TTL != nil {
		v, err := p.value(u.TTL, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "[ttl]",
			Type: pgschema.Scalar(pgschema.Int)})
		if err != nil {
			return err
		}
		w.TTL = &v
	}
	return nil
}
