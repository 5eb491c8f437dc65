package bulk

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
)

// UnloadProgress counts an unload's work so far.
type UnloadProgress struct {
	Rows                    int64
	RangesDone, RangesTotal int
}

// Unload writes every live row of keyspace.table to w as CSV: a header of
// the column names in the order SELECT * gives them, then one line per
// row, values in cqlsh's forms. Each token range is read once, from the
// first of its replicas that answers, as one streamed query (Postgres
// sends rows as they are read, so memory stays bounded). A replica that
// fails after sending rows of a range stops the unload with an error.
func (c *Cluster) Unload(ctx context.Context, keyspace, table string, w io.Writer, progress func(UnloadProgress)) (int64, error) {
	t, placement, err := c.table(keyspace, table)
	if err != nil {
		return 0, err
	}
	out := bufio.NewWriterSize(w, 1<<20)
	var line []byte
	for i, col := range t.Columns {
		if i > 0 {
			line = append(line, ',')
		}
		line = writeField(line, col.Name, false)
	}
	out.Write(append(line, '\n'))
	q := newUnloadQueries(t)
	conns := make([]*pgx.Conn, len(c.URLs))
	down := make([]error, len(c.URLs))
	defer func() {
		for _, conn := range conns {
			if conn != nil {
				conn.Close(context.Background())
			}
		}
	}()
	now := int32(time.Now().Unix())
	p := UnloadProgress{RangesTotal: len(c.Ring.Tokens())}
	for i := range c.Ring.Tokens() {
		rg := c.Ring.Range(i)
		var errs []error
		done := false
		for _, s := range placement.RangeReplicas(i) {
			if down[s] != nil {
				errs = append(errs, down[s])
				continue
			}
			if conns[s] == nil {
				conn, err := c.connect(ctx, s)
				if err != nil {
					down[s] = err
					errs = append(errs, err)
					continue
				}
				conns[s] = conn
			}
			n, err := q.readRange(ctx, conns[s].PgConn(), int64(rg.Start), int64(rg.End), now, out)
			p.Rows += n
			if err == nil {
				done = true
				break
			}
			err = fmt.Errorf("shard %s: %w", c.Ring.Shards()[s].Name, err)
			if n > 0 || ctx.Err() != nil {
				return p.Rows, err
			}
			conns[s].Close(context.Background())
			conns[s], down[s] = nil, err
			errs = append(errs, err)
		}
		if !done {
			return p.Rows, fmt.Errorf("no replica of token range (%d, %d] answered: %w", rg.Start, rg.End, errors.Join(errs...))
		}
		p.RangesDone++
		if progress != nil {
			progress(p)
		}
	}
	return p.Rows, out.Flush()
}

// unloadQueries are the reads of one table's token ranges: rows (with
// their partition's static cells), and partitions holding static cells
// only, for ranges that wrap around the ring or not.
type unloadQueries struct {
	t                *pgschema.Table
	rows, rowsWrap   string
	stat, statWrap   string
	columns, statCol []outColumn
}

// outColumn is one CSV column read from a result: the value's result
// column and, where the column has one, its empty flag's.
type outColumn struct {
	col         *pgschema.Column
	value, flag int // flag -1 when none; value -1 for a null column
}

func newUnloadQueries(t *pgschema.Table) *unloadQueries {
	q := &unloadQueries{t: t}
	live := func(alias string, c *pgschema.Column) string {
		return fmt.Sprintf("(%[1]s.%[2]s IS NULL OR %[1]s.%[2]s > $3::integer)", alias, quote(c.ExpiryColumn()))
	}
	holds := func(alias string, c *pgschema.Column) string {
		v := alias + "." + quote(c.PGName)
		if e := c.EmptyColumn(); e != "" {
			return fmt.Sprintf("(%s IS NOT NULL OR %s.%s IS TRUE)", v, alias, quote(e))
		}
		return "(" + v + " IS NOT NULL)"
	}
	rowLive := func(alias string, kind pgschema.ColumnKind) string {
		var l []string
		if kind == pgschema.Regular {
			l = append(l, fmt.Sprintf("(%[1]s.%[2]s IS NOT NULL AND (%[1]s.%[3]s IS NULL OR %[1]s.%[3]s > $3::integer))",
				alias, quote(pgschema.RowWritetimeColumn), quote(pgschema.RowExpiryColumn)))
		}
		for _, c := range t.Columns {
			if c.Kind == kind {
				l = append(l, "("+holds(alias, c)+" AND "+live(alias, c)+")")
			}
		}
		if len(l) == 0 {
			return "false"
		}
		return "(" + strings.Join(l, " OR ") + ")"
	}
	// selectList returns the select list and the columns of the rows
	// read from alias a (main table) and s (static row); a static-only
	// read has no main table and nulls for the rest.
	selectList := func(a, s string, staticOnly bool) (string, []outColumn) {
		var items []string
		var cols []outColumn
		for _, c := range t.Columns {
			oc := outColumn{col: c, value: -1, flag: -1}
			alias := a
			if c.Kind == pgschema.Static || (staticOnly && c.Kind == pgschema.PartitionKey) {
				alias = s
			}
			switch {
			case staticOnly && (c.Kind == pgschema.Clustering || c.Kind == pgschema.Regular):
			case c.IsKey():
				oc.value = len(items)
				items = append(items, stored(alias, c))
			default:
				oc.value = len(items)
				items = append(items, fmt.Sprintf("CASE WHEN %s THEN %s END", live(alias, c), stored(alias, c)))
				if e := c.EmptyColumn(); e != "" {
					oc.flag = len(items)
					items = append(items, fmt.Sprintf("CASE WHEN %s THEN %s.%s END", live(alias, c), alias, quote(e)))
				}
			}
			cols = append(cols, oc)
		}
		return strings.Join(items, ", "), cols
	}
	rangeCond := func(alias string, wrap bool) string {
		tok := alias + "." + quote(pgschema.TokenColumn)
		if wrap {
			return fmt.Sprintf("(%[1]s > $1::bigint OR %[1]s <= $2::bigint)", tok)
		}
		return fmt.Sprintf("%[1]s > $1::bigint AND %[1]s <= $2::bigint", tok)
	}
	var order []string
	order = append(order, "t."+quote(pgschema.TokenColumn))
	for _, c := range t.KeyColumns() {
		o := "t." + quote(c.SortColumn())
		if c.Desc {
			o += " DESC"
		}
		order = append(order, o)
	}
	samePartition := func(x, y string) string {
		cond := []string{fmt.Sprintf("%s.%s = %s.%[2]s", x, quote(pgschema.TokenColumn), y)}
		for _, c := range t.PartitionKey {
			cond = append(cond, fmt.Sprintf("%s.%s = %s.%[2]s", x, quote(c.PGName), y))
		}
		return strings.Join(cond, " AND ")
	}
	list, cols := selectList("t", "st", false)
	q.columns = cols
	from := t.Ident() + " AS t"
	if t.HasStatic() {
		from += fmt.Sprintf(" LEFT JOIN %s AS st ON %s", t.StaticIdent(), samePartition("st", "t"))
	}
	for _, wrap := range []bool{false, true} {
		sql := fmt.Sprintf("SELECT %s FROM %s WHERE %s AND %s ORDER BY %s", list, from, rangeCond("t", wrap),
			rowLive("t", pgschema.Regular), strings.Join(order, ", "))
		if wrap {
			q.rowsWrap = sql
		} else {
			q.rows = sql
		}
	}
	if t.HasStatic() && len(t.Clustering) > 0 {
		list, cols := selectList("t", "st", true)
		q.statCol = cols
		for _, wrap := range []bool{false, true} {
			sql := fmt.Sprintf("SELECT %s FROM %s AS st WHERE %s AND %s AND NOT EXISTS (SELECT 1 FROM %s AS t WHERE %s AND %s) ORDER BY st.%s",
				list, t.StaticIdent(), rangeCond("st", wrap), rowLive("st", pgschema.Static), t.Ident(),
				samePartition("t", "st"), rowLive("t", pgschema.Regular), quote(pgschema.TokenColumn))
			if wrap {
				q.statWrap = sql
			} else {
				q.stat = sql
			}
		}
	}
	return q
}

// stored is the SQL expression reading column c of alias: its natural
// column or, for a column with an exact companion, the natural value's
// send form or the companion's bytes (pgschema.ExactSelect), which the
// column's FromPG reads alike.
func stored(alias string, c *pgschema.Column) string {
	v := alias + "." + quote(c.PGName)
	if !c.HasExact() {
		return v
	}
	st, _ := pgschema.StorageOf(c.Type) // the table was built from checked types
	return pgschema.ExactSelect(c.Type, alias+"."+quote(c.ExactColumn()), st.Send(v))
}

var unloadOIDs = []uint32{pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDInt4}
var binaryFormat = []int16{1}

// readRange writes the rows of the token range (start, end] to out and
// returns how many it wrote.
func (q *unloadQueries) readRange(ctx context.Context, conn *pgconn.PgConn, start, end int64, now int32, out *bufio.Writer) (int64, error) {
	args := [][]byte{
		binary.BigEndian.AppendUint64(nil, uint64(start)),
		binary.BigEndian.AppendUint64(nil, uint64(end)),
		binary.BigEndian.AppendUint32(nil, uint32(now)),
	}
	wrap := start >= end
	rows, stat := q.rows, q.stat
	if wrap {
		rows, stat = q.rowsWrap, q.statWrap
	}
	n, err := q.run(ctx, conn, rows, args, q.columns, out)
	if err != nil || stat == "" {
		return n, err
	}
	m, err := q.run(ctx, conn, stat, args, q.statCol, out)
	return n + m, err
}

func (q *unloadQueries) run(ctx context.Context, conn *pgconn.PgConn, sql string, args [][]byte, cols []outColumn, out *bufio.Writer) (int64, error) {
	rr := conn.ExecParams(ctx, sql, args, unloadOIDs, binaryFormat, binaryFormat)
	var n int64
	var line []byte
	for rr.NextRow() {
		vals := rr.Values()
		line = line[:0]
		for i, oc := range cols {
			if i > 0 {
				line = append(line, ',')
			}
			var v []byte
			if oc.value >= 0 && vals[oc.value] != nil {
				s, err := pgschema.StorageOf(oc.col.Type)
				if err != nil {
					rr.Close()
					return n, err
				}
				v = vals[oc.value]
				if s.FromPG != nil {
					if v, err = s.FromPG(nil, v); err != nil {
						rr.Close()
						return n, fmt.Errorf("column %s: %w", oc.col.Name, err)
					}
				}
			} else if oc.flag >= 0 && vals[oc.flag] != nil && vals[oc.flag][0] == 1 {
				v = []byte{}
			}
			text, err := cqltext.Format(oc.col.Type, v)
			if err != nil {
				rr.Close()
				return n, fmt.Errorf("column %s: %w", oc.col.Name, err)
			}
			line = writeField(line, text, v == nil)
		}
		out.Write(append(line, '\n'))
		n++
	}
	_, err := rr.Close()
	return n, err
}
