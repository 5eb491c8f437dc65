package translate

import (
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// WriteKind says what a write does to the rows it names.
type WriteKind uint8

// Write kinds.
const (
	// WriteUpsert sets cells, creating the row if needed (INSERT, UPDATE,
	// and DELETE of columns, which writes cell tombstones).
	WriteUpsert WriteKind = iota
	// WriteDeleteRow deletes whole rows.
	WriteDeleteRow
)

// Write changes rows named by their full primary key.
type Write struct {
	Metadata
	Table *pgschema.Table
	Kind  WriteKind
	// Keys restricts every key column, partition key first, by = or IN;
	// the rows written are their cartesian product.
	Keys []Restriction
	// SQL writes one row; its parameters take the row's key, token,
	// timestamp and expiry at execution.
	SQL    string
	Params []Param
	// Timestamp and TTL come from USING, when given.
	Timestamp, TTL *Value
}

func (p *planner) planInsert(s *InsertStmt) (Plan, error) {
	t, err := p.table(s.Table)
	if err != nil {
		return nil, err
	}
	if s.JSON != nil || s.IfNotExists {
		return nil, invalidf("INSERT JSON and IF NOT EXISTS are not supported yet")
	}
	if len(s.Columns) == 0 {
		return nil, invalidf("No columns provided to INSERT")
	}
	if len(s.Columns) != len(s.Values) {
		return nil, invalidf("Unmatched column names/values")
	}
	w := &Write{Table: t, Kind: WriteUpsert, Keys: make([]Restriction, len(t.KeyColumns()))}
	var cells []cell
	seen := map[*pgschema.Column]bool{}
	for i, name := range s.Columns {
		c, err := column(t, name)
		if err != nil {
			return nil, err
		}
		if seen[c] {
			return nil, invalidf("The column names contains duplicates")
		}
		seen[c] = true
		v, err := p.value(s.Values[i], specOf(t, c))
		if err != nil {
			return nil, err
		}
		if c.IsKey() {
			if err := checkNotNull(v, c); err != nil {
				return nil, err
			}
			w.Keys[c.Index] = Restriction{Column: c, Op: OpEQ, Values: []Value{v}}
			continue
		}
		cells = append(cells, cell{column: c, value: v})
	}
	if err := missingKeys(t, w.Keys); err != nil {
		return nil, err
	}
	if err := p.using(w, s.Using); err != nil {
		return nil, err
	}
	if w.SQL, w.Params, err = upsertSQL(t, cells, true); err != nil {
		return nil, err
	}
	w.PKIndexes = pkIndexes(t, p.vars)
	return w, nil
}

func (p *planner) planUpdate(s *UpdateStmt) (Plan, error) {
	t, err := p.table(s.Table)
	if err != nil {
		return nil, err
	}
	if s.IfExists || len(s.Conditions) > 0 {
		return nil, invalidf("Conditional updates are not supported yet")
	}
	w := &Write{Table: t, Kind: WriteUpsert}
	if err := p.using(w, s.Using); err != nil {
		return nil, err
	}
	var cells []cell
	for _, a := range s.Assignments {
		c, err := column(t, a.Column)
		if err != nil {
			return nil, err
		}
		if c.IsKey() {
			return nil, invalidf("PRIMARY KEY part %s found in SET part", c.Name)
		}
		if a.Op != AssignSet || a.Key != nil || a.Field != "" {
			return nil, invalidf("Invalid operation (%s) for non counter column %s", assignmentString(a), c.Name)
		}
		v, err := p.value(a.Value, specOf(t, c))
		if err != nil {
			return nil, err
		}
		cells = append(cells, cell{column: c, value: v})
	}
	if w.Keys, err = p.writeKeys(t, s.Where, "UPDATE"); err != nil {
		return nil, err
	}
	if w.SQL, w.Params, err = upsertSQL(t, cells, false); err != nil {
		return nil, err
	}
	w.PKIndexes = pkIndexes(t, p.vars)
	return w, nil
}

func (p *planner) planDelete(s *DeleteStmt) (Plan, error) {
	t, err := p.table(s.Table)
	if err != nil {
		return nil, err
	}
	if s.IfExists || len(s.Conditions) > 0 {
		return nil, invalidf("Conditional deletions are not supported yet")
	}
	if s.Using.TTL != nil {
		return nil, &SyntaxError{Msg: "TTL is not allowed in DELETE statements"}
	}
	w := &Write{Table: t, Kind: WriteDeleteRow}
	if err := p.using(w, s.Using); err != nil {
		return nil, err
	}
	var cells []cell
	for _, d := range s.Columns {
		c, err := column(t, d.Column)
		if err != nil {
			return nil, err
		}
		if c.IsKey() {
			return nil, invalidf("Invalid identifier %s for deletion (should not be a PRIMARY KEY part)", c.Name)
		}
		if d.Key != nil || d.Field != "" {
			return nil, invalidf("Deleting collection elements and fields is not supported yet")
		}
		cells = append(cells, cell{column: c, value: constValue(nil)})
	}
	if w.Keys, err = p.writeKeys(t, s.Where, "DELETE"); err != nil {
		return nil, err
	}
	if len(cells) > 0 {
		w.Kind = WriteUpsert
		w.SQL, w.Params, err = upsertSQL(t, cells, false)
	} else {
		w.SQL, w.Params, err = deleteRowSQL(t)
	}
	if err != nil {
		return nil, err
	}
	w.PKIndexes = pkIndexes(t, p.vars)
	return w, nil
}

// writeKeys checks the WHERE clause of an UPDATE or DELETE: every key
// column restricted by = or IN, and nothing else.
func (p *planner) writeKeys(t *pgschema.Table, where []Relation, verb string) ([]Restriction, error) {
	r, err := p.restrict(t, where)
	if err != nil {
		return nil, err
	}
	if len(r.token) > 0 {
		return nil, invalidf("The token function cannot be used in WHERE clauses for %s statements", verb)
	}
	if len(r.others) > 0 {
		var names []string
		for _, o := range r.others {
			names = append(names, o.Column.Name)
		}
		return nil, invalidf("Non PRIMARY KEY columns found in where clause: %s ", strings.Join(names, ", "))
	}
	keys := make([]Restriction, len(t.KeyColumns()))
	for i, rs := range r.partition {
		if len(rs) > 0 && rs[0].Op != OpEQ && rs[0].Op != OpIN {
			return nil, invalidf("Only EQ and IN relation are supported on the partition key (unless you use the token() function) for %s statements", verb)
		}
		if len(rs) > 0 {
			keys[i] = rs[0]
		}
	}
	for i, rs := range r.cluster {
		if len(rs) > 0 && rs[0].Op != OpEQ && rs[0].Op != OpIN {
			return nil, invalidf("Slice restrictions are not supported on the clustering columns in %s statements", verb)
		}
		if len(rs) > 0 {
			keys[len(t.PartitionKey)+i] = rs[0]
		}
	}
	return keys, missingKeys(t, keys)
}

// missingKeys names the key columns a write leaves unrestricted.
func missingKeys(t *pgschema.Table, keys []Restriction) error {
	var pk, ck []string
	for i, c := range t.KeyColumns() {
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

func assignmentString(a Assignment) string {
	switch a.Op {
	case AssignAdd:
		return a.Column + " + " + termString(a.Value)
	case AssignSub:
		return a.Column + " - " + termString(a.Value)
	}
	return termString(a.Value)
}
