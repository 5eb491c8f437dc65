package migrate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Counter tables copy as values. A counter is a sum of increments with
// no write time to merge by, so the copy makes each row's counters on the
// target equal to the origin's with one increment of the difference: run
// again, it adds nothing. That holds only while nothing else increments
// them: under dual writes an increment would reach the target twice, once
// through the gateway and once in the origin's value the copy carries,
// so CheckCopyable refuses counter tables while a gateway of the target
// runs them.

// isCounterTable reports whether a table's regular columns are counters.
func isCounterTable(t *Table) bool {
	return slices.ContainsFunc(t.Columns, func(c Column) bool { return c.Type == "counter" })
}

// counterQuery reads a counter table's rows by token range and brings the
// target's counters to the origin's.
type counterQuery struct {
	keys, counters []string // quoted
	sql, sqlNext   string
	read, update   string
}

func newCounterQuery(ks *Keyspace, t *Table) *counterQuery {
	q := &counterQuery{}
	var pk []string
	for _, c := range t.Columns {
		n := pgschema.QuoteIdentifier(c.Name)
		switch c.Kind {
		case "partition_key":
			pk = append(pk, n)
			q.keys = append(q.keys, n)
		case "clustering":
			q.keys = append(q.keys, n)
		default:
			q.counters = append(q.counters, n)
		}
	}
	name := pgschema.QuoteIdentifier(ks.Name) + "." + pgschema.QuoteIdentifier(t.Name)
	base := fmt.Sprintf("SELECT %s, %s FROM %s WHERE token(%s) ", strings.Join(q.keys, ", "), strings.Join(q.counters, ", "),
		name, strings.Join(pk, ", "))
	q.sql = base + ">= ? AND token(" + strings.Join(pk, ", ") + ") <= ?"
	q.sqlNext = base + "> ? AND token(" + strings.Join(pk, ", ") + ") <= ?"
	where := strings.Join(q.keys, " = ? AND ") + " = ?"
	q.read = fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(q.counters, ", "), name, where)
	sets := make([]string, len(q.counters))
	for i, c := range q.counters {
		sets[i] = c + " = " + c + " + ?"
	}
	q.update = fmt.Sprintf("UPDATE %s SET %s WHERE %s", name, strings.Join(sets, ", "), where)
	return q
}

// copyRange brings the target's counters of range i of n to the origin's,
// and returns the rows read.
func (q *counterQuery) copyRange(ctx context.Context, src, dst *gocql.Session, i, n, pageSize int, limit *limiter,
	copied func(int)) (int64, error) {
	start, end := rangeBounds(i, n)
	sql := q.sqlNext
	if i == 0 {
		sql = q.sql
	}
	iter := src.Query(sql, start, end).WithContext(ctx).PageSize(pageSize).Iter()
	keys := make([]rawValue, len(q.keys))
	want := make([]*int64, len(q.counters))
	have := make([]*int64, len(q.counters))
	dest := make([]any, 0, len(keys)+len(want))
	for k := range keys {
		dest = append(dest, &keys[k])
	}
	for c := range want {
		dest = append(dest, &want[c])
	}
	haveDest := make([]any, len(have))
	for c := range have {
		haveDest[c] = &have[c]
	}
	var rows int64
	for iter.Scan(dest...) {
		limit.wait(ctx, 1)
		args := make([]any, len(keys))
		for k := range keys {
			args[k] = gocqlRaw(keys[k].bytes())
		}
		if err := dst.Query(q.read, args...).WithContext(ctx).Scan(haveDest...); err != nil && err != gocql.ErrNotFound {
			iter.Close()
			return rows, fmt.Errorf("reading the target's counters: %w", err)
		}
		deltas := make([]any, len(want), len(want)+len(args))
		changed := false
		for c := range want {
			d := value(want[c]) - value(have[c])
			deltas[c], changed = d, changed || d != 0
			have[c] = nil
		}
		if changed {
			if err := dst.Query(q.update, append(deltas, args...)...).WithContext(ctx).Exec(); err != nil {
				iter.Close()
				return rows, fmt.Errorf("writing the target's counters: %w", err)
			}
		}
		rows++
		copied(1)
	}
	if err := iter.Close(); err != nil {
		return rows, fmt.Errorf("reading the origin: %w", err)
	}
	return rows, nil
}

func value(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// gocqlRaw binds a value as the protocol encodes it.
type gocqlRaw []byte

func (r gocqlRaw) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return r, nil }
