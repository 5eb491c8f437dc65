package webui

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
	"github.com/cqlpg/cqlpg/sharding"
)

// uiTableRef names a table in the view's table choosers.
type uiTableRef struct {
	Keyspace, Name string
	// Value identifies the table in a form: keyspace and name, each
	// path-escaped, joined by a slash, which neither can then hold.
	Value string
}

// uiTables lists the tables the view shows, by keyspace and name.
func uiTables(schema *pgschema.Schema) []uiTableRef {
	var out []uiTableRef
	for _, ks := range placeableKeyspaces(schema) {
		k := schema.Keyspace(ks)
		for _, name := range k.TableNames() {
			if stored(k.Tables[name]) {
				out = append(out, uiTableRef{Keyspace: ks, Name: name, Value: tableValue(ks, name)})
			}
		}
	}
	return out
}

// stored reports whether t's rows live in Postgres tables on the shards,
// as virtual tables' do not.
func stored(t *pgschema.Table) bool { return !t.Virtual && t.PGName != "" }

// tableValue identifies a table in the view's forms.
func tableValue(keyspace, name string) string {
	return url.PathEscape(keyspace) + "/" + url.PathEscape(name)
}

// chosenTable returns the table a form names, by ?t=keyspace/name or by
// ?ks= and ?table=, or nil when it names none.
func (q *uiRequest) chosenTable() (*pgschema.Table, error) {
	form := q.r.URL.Query()
	ks, name := form.Get("ks"), form.Get("table")
	if v := form.Get("t"); v != "" {
		a, b, ok := strings.Cut(v, "/")
		var err1, err2 error
		ks, err1 = url.PathUnescape(a)
		name, err2 = url.PathUnescape(b)
		if !ok || err1 != nil || err2 != nil {
			return nil, &uiBadRequest{fmt.Sprintf("%q does not name a table as keyspace/table", v)}
		}
	}
	if ks == "" && name == "" {
		return nil, nil
	}
	if t := q.schema.Table(ks, name); t != nil && stored(t) && placeable(q.schema.Keyspace(ks)) {
		return t, nil
	}
	return nil, &uiBadRequest{fmt.Sprintf("table %s.%s does not exist", pgschema.QuoteIdentifier(ks), pgschema.QuoteIdentifier(name))}
}

// keyPage is the key placement page's view.
type keyPage struct {
	Tables []uiTableRef
	Chosen string
	Table  *pgschema.Table
	Inputs []keyInput
	// Error says why the key could not be placed.
	Error string
	// What follows is set once a key is placed.
	Placed      bool
	Token       int64
	Range       *uiRange
	Replication string
	// TokenCQL is a statement that shows the same token through CQL.
	TokenCQL string
	Columns  []string
	Replicas []keyReplica
	// Agree is set when every replica that answered holds the same rows,
	// write times included; Answered counts them.
	Agree    bool
	Answered int
}

// keyInput is one partition key column's field in the form.
type keyInput struct {
	Name, Type, Value string
}

// keyReplica is one replica of the key and what it holds of it.
type keyReplica struct {
	*uiShard
	// Rows are the partition's rows on this replica in clustering
	// order, as cqlsh prints them; More is set when there are more than
	// the page shows.
	Rows [][]string
	More bool
	// Err says why the replica's rows could not be read.
	Err string
	// Differs is set when the replica's rows are not the first
	// answering replica's.
	Differs bool
	rows    [][][]byte
}

// keyRowLimit bounds the rows the page shows of each replica.
const keyRowLimit = 100

// keyView builds the key placement page: pick a table, type its partition
// key, and see the key's token, its replicas in order under the
// keyspace's strategy, their health, and the rows each holds.
func (q *uiRequest) keyView() (any, error) {
	page := &keyPage{Tables: uiTables(q.schema)}
	t, err := q.chosenTable()
	if err != nil || t == nil {
		return page, err
	}
	page.Table = t
	page.Chosen = tableValue(t.Keyspace, t.Name)
	values := q.r.URL.Query()["k"]
	if prev := q.r.URL.Query().Get("prev"); prev != "" && prev != page.Chosen {
		// The form was sent to choose another table: the values typed
		// were another table's key.
		values = nil
	}
	for i, c := range t.PartitionKey {
		in := keyInput{Name: c.Name, Type: c.Type.String()}
		if i < len(values) {
			in.Value = values[i]
		}
		page.Inputs = append(page.Inputs, in)
	}
	if len(values) == 0 {
		return page, nil
	}
	if len(values) != len(t.PartitionKey) {
		page.Error = fmt.Sprintf("the partition key has %d columns, %d values were given", len(t.PartitionKey), len(values))
		return page, nil
	}
	key := make([][]byte, len(values))
	for i, c := range t.PartitionKey {
		v, err := cqltext.Parse(c.Type, values[i])
		if err == nil {
			v, err = pgschema.Normalize(c.Type, v)
		}
		if err != nil {
			page.Error = fmt.Sprintf("%s: %v", c.Name, err)
			return page, nil
		}
		key[i] = v
	}
	q.placeKey(page, t, key)
	return page, nil
}

// placeKey fills in where key lives and what each of its replicas holds.
func (q *uiRequest) placeKey(page *keyPage, t *pgschema.Table, key [][]byte) {
	topo := q.b.Cluster().Topology()
	k := q.schema.Keyspace(t.Keyspace)
	placement := topo.Placement(k.Replication)
	token := sharding.KeyToken(key)
	page.Placed, page.Token, page.Replication = true, int64(token), k.Replication.String()
	d := ringDrawing{ring: topo.Ring, up: func(i int) bool { return topo.Shards[i].Pool.Alive() }, noArcs: true}
	shards := d.draw().Shards
	page.Range = rangeDetail(topo.Ring, placement, shards, topo.Ring.RangeIndex(token))
	page.TokenCQL = tokenCQL(t, key)
	read := rowsCQL(t)
	for _, c := range t.Columns {
		page.Columns = append(page.Columns, c.Name)
	}
	for _, c := range writeTimed(t) {
		page.Columns = append(page.Columns, "writetime("+c.Name+")")
	}
	ctx, cancel := context.WithTimeout(q.r.Context(), q.b.ReadTimeout()+time.Second)
	defer cancel()
	page.Replicas = make([]keyReplica, len(page.Range.Replicas))
	var wg sync.WaitGroup
	for i, sh := range page.Range.Replicas {
		page.Replicas[i].uiShard = sh
		if !sh.Up {
			page.Replicas[i].Err = "down: not asked"
			continue
		}
		wg.Go(func() {
			page.Replicas[i].read(ctx, q, read, key, t)
		})
	}
	wg.Wait()
	page.Answered, page.Agree = compareReplicas(page.Replicas)
}

// compareReplicas marks the replicas whose rows differ from those most
// replicas that answered hold (the first such in replica order on a tie),
// and returns how many answered and whether they all agree.
func compareReplicas(replicas []keyReplica) (answered int, agree bool) {
	same := func(a, b *keyReplica) bool {
		return slices.EqualFunc(a.rows, b.rows, func(x, y [][]byte) bool { return slices.EqualFunc(x, y, bytes.Equal) })
	}
	var ref *keyReplica
	best := 0
	for i := range replicas {
		r := &replicas[i]
		if r.Err != "" {
			continue
		}
		answered++
		n := 0
		for j := range replicas {
			if replicas[j].Err == "" && same(r, &replicas[j]) {
				n++
			}
		}
		if n > best {
			ref, best = r, n
		}
	}
	for i := range replicas {
		if r := &replicas[i]; r.Err == "" && !same(ref, r) {
			r.Differs = true
		}
	}
	return answered, best == answered
}

// read reads the partition from this replica alone and formats its rows.
func (r *keyReplica) read(ctx context.Context, q *uiRequest, cql string, key [][]byte, t *pgschema.Table) {
	rows, err := q.b.ReplicaRows(ctx, q.role, cql, key, r.Index)
	if err != nil {
		r.Err = err.Error()
		return
	}
	if len(rows) > keyRowLimit {
		rows, r.More = rows[:keyRowLimit], true
	}
	r.rows = rows
	for _, row := range rows {
		out := make([]string, len(row))
		for j, v := range row {
			if v == nil {
				out[j] = "null"
				continue
			}
			typ, name := pgschema.Scalar(pgschema.Bigint), "writetime" // rowsCQL's
			if j < len(t.Columns) {
				typ, name = t.Columns[j].Type, t.Columns[j].Name
			}
			s, err := cqltext.Table.Format(typ, v)
			if err != nil {
				s = fmt.Sprintf("(%s: %v)", name, err)
			}
			out[j] = s
		}
		r.Rows = append(r.Rows, out)
	}
}

// writeTimed lists the columns whose write time the page compares: the
// static and regular columns that are one cell each.
func writeTimed(t *pgschema.Table) []*pgschema.Column {
	var out []*pgschema.Column
	for _, c := range t.Columns {
		if (c.Kind == pgschema.Regular || c.Kind == pgschema.Static) && !c.Type.IsMultiCell() && !c.Type.IsCounter() {
			out = append(out, c)
		}
	}
	return out
}

// rowsCQL is the statement that reads a partition of t whole: every
// column and the write time of every single-cell column, so that replicas
// holding the same values written at different times do not look alike.
func rowsCQL(t *pgschema.Table) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pgschema.QuoteIdentifier(c.Name))
	}
	for _, c := range writeTimed(t) {
		fmt.Fprintf(&b, ", WRITETIME(%s)", pgschema.QuoteIdentifier(c.Name))
	}
	fmt.Fprintf(&b, " FROM %s.%s WHERE ", pgschema.QuoteIdentifier(t.Keyspace), pgschema.QuoteIdentifier(t.Name))
	for i, c := range t.PartitionKey {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteString(pgschema.QuoteIdentifier(c.Name) + " = ?")
	}
	fmt.Fprintf(&b, " LIMIT %d", keyRowLimit+1)
	return b.String()
}

// tokenCQL is a SELECT token(...) statement for key, with the key's values
// written as CQL literals, to check the page's token through CQL.
func tokenCQL(t *pgschema.Table, key [][]byte) string {
	var names, where []string
	for i, c := range t.PartitionKey {
		name := pgschema.QuoteIdentifier(c.Name)
		names = append(names, name)
		lit, err := cqltext.Format(c.Type, key[i])
		if err != nil {
			lit = "?"
		} else if quotedLiteral(c.Type) {
			lit = "'" + strings.ReplaceAll(lit, "'", "''") + "'"
		}
		where = append(where, name+" = "+lit)
	}
	return fmt.Sprintf("SELECT token(%s) FROM %s.%s WHERE %s LIMIT 1", strings.Join(names, ", "),
		pgschema.QuoteIdentifier(t.Keyspace), pgschema.QuoteIdentifier(t.Name), strings.Join(where, " AND "))
}

// quotedLiteral reports whether a value of t is written in CQL as a
// string literal.
func quotedLiteral(t *pgschema.Type) bool {
	switch t.Kind {
	case pgschema.Ascii, pgschema.Text, pgschema.Inet, pgschema.Timestamp, pgschema.Date,
		pgschema.Time:
		return true
	}
	return false
}
