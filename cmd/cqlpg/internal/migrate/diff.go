package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/bulk"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
)

// DiffOptions shape a comparison.
type DiffOptions struct {
	RangeOptions
	// Fix writes the origin's cells of each missing or differing row to
	// the target, at their write times.
	Fix bool
	// FixOrigin writes the target's cells that are newer than the
	// origin's, of each extra or differing row, to the origin at their
	// write times: the writes the origin missed while dual writes ran.
	FixOrigin bool
	// Found, when set, is called for each difference, from the workers.
	Found func(Difference)
	// Progress, when set, is called as ranges complete.
	Progress func(DiffProgress)
}

// Difference is one row that is not the same on both sides.
type Difference struct {
	Table string
	// Kind is "missing" (on the target), "extra" (only on the target) or
	// "differs" (a value or write time).
	Kind string
	// Key is the row's primary key, as CQL literals: k = 1, c = 'a'.
	Key string
}

// DiffProgress is how far a table's comparison is.
type DiffProgress struct {
	Table              string
	Ranges, RangesDone int
	Rows               int64 // origin rows compared
	Differences        int64
}

// DiffResult sums a table's comparison.
type DiffResult struct {
	Rows                      int64 // origin rows compared
	Missing, Extra, Differing int64
	Fixed                     int64
	// FixedOrigin counts the rows whose newer cells were written to the
	// origin.
	FixedOrigin int64
}

// Diff compares table t of the origin (read through src) with the same
// table of the target (read through dst, a gateway on it), token range
// by token range: a digest of each side's rows first, then, where the
// digests differ, the rows, by key. Cells compare by value and write
// time; TTLs, which count down, do not. With opts.Fix, fix writes the
// origin's rows that are missing or differ on the target, as a copy
// does; rows only the target holds are reported and left alone.
func Diff(ctx context.Context, src, dst *gocql.Session, fix *bulk.Cluster, ks *Keyspace, t *Table, opts DiffOptions) (DiffResult, error) {
	opts.setDefaults()
	name := pgschema.QuoteIdentifier(ks.Name) + "." + pgschema.QuoteIdentifier(t.Name)
	q := newRangeQuery(ks, t)
	keyText := keyFormatter(t)
	var (
		mu   sync.Mutex // guards res and prog
		res  DiffResult
		prog = DiffProgress{Table: name, Ranges: opts.Splits}
	)
	err := forRanges(ctx, opts.RangeOptions, name, nil, func() (func(context.Context, int) error, func(), error) {
		var cp *bulk.Copier
		closeCopier := func() {}
		if opts.Fix && !isCounterTable(t) { // counters are not fixed: migrate copy carries them
			var err error
			if cp, err = fix.NewCopier(ks.Name, t.Name, q.columns); err != nil {
				return nil, nil, err
			}
			closeCopier = cp.Close
		}
		work := func(ctx context.Context, i int) error {
			r, diffs, err := q.diffRange(ctx, src, dst, cp, opts.FixOrigin && !isCounterTable(t), i, opts.Splits, opts.PageSize)
			if err != nil {
				return err
			}
			mu.Lock()
			res.Rows += r.Rows
			res.Missing += r.Missing
			res.Extra += r.Extra
			res.Differing += r.Differing
			res.Fixed += r.Fixed
			res.FixedOrigin += r.FixedOrigin
			prog.RangesDone++
			prog.Rows = res.Rows
			prog.Differences = res.Missing + res.Extra + res.Differing
			p := prog
			mu.Unlock()
			if opts.Found != nil {
				for _, d := range diffs {
					opts.Found(Difference{Table: name, Kind: d.kind, Key: keyText(d.key)})
				}
			}
			if opts.Progress != nil {
				opts.Progress(p)
			}
			return nil
		}
		return work, closeCopier, nil
	})
	return res, err
}

// found is one difference in a range: its kind and the key's raw values.
type found struct {
	kind string
	key  [][]byte
}

// diffRange compares range i of n. With cp, it writes the origin's rows
// that are missing or differ to the target; with fixOrigin, the target's
// newer cells of rows that are extra or differ to the origin.
func (q *rangeQuery) diffRange(ctx context.Context, src, dst *gocql.Session, cp *bulk.Copier, fixOrigin bool,
	i, n, pageSize int) (DiffResult, []found, error) {
	var res DiffResult
	a, na, err := q.digest(ctx, src, i, n, pageSize)
	if err != nil {
		return res, nil, fmt.Errorf("origin: %w", err)
	}
	res.Rows = na
	b, nb, err := q.digest(ctx, dst, i, n, pageSize)
	if err != nil {
		return res, nil, fmt.Errorf("target: %w", err)
	}
	if a == b && na == nb {
		return res, nil, nil
	}
	// The digests differ: compare the rows by key. A range holds
	// 1/n of the table; more splits bound the memory this takes.
	origin := map[string]rangeRow{}
	var order []string
	if err := q.scan(ctx, src, i, n, pageSize, func(key, sig string, raw []rawValue, now time.Time) {
		r := rangeRow{signature: sig, keys: q.keys(raw)}
		if cp != nil {
			r.copy = q.row(raw, now) // kept only to fix the target
		}
		if fixOrigin {
			r.times = q.writeTimes(raw) // kept only to fix the origin
		}
		origin[key] = r
		order = append(order, key)
	}); err != nil {
		return res, nil, fmt.Errorf("origin: %w", err)
	}
	res.Rows = int64(len(order))
	var diffs []found
	seen := map[string]bool{}
	var fixes []bulk.CopyRow
	var back []originWrite
	if err := q.scan(ctx, dst, i, n, pageSize, func(key, sig string, raw []rawValue, _ time.Time) {
		seen[key] = true
		o, ok := origin[key]
		switch {
		case !ok:
			res.Extra++
			diffs = append(diffs, found{"extra", q.keys(raw)})
		case o.signature != sig:
			res.Differing++
			diffs = append(diffs, found{"differs", o.keys})
			fixes = append(fixes, o.copy)
		default:
			return
		}
		if fixOrigin {
			if w := q.newerCells(raw, o.times); len(w) > 0 {
				back = append(back, w...)
				res.FixedOrigin++
			}
		}
	}); err != nil {
		return res, nil, fmt.Errorf("target: %w", err)
	}
	for _, k := range order {
		if !seen[k] {
			o := origin[k]
			res.Missing++
			diffs = append(diffs, found{"missing", o.keys})
			fixes = append(fixes, o.copy)
		}
	}
	if cp != nil && len(fixes) > 0 {
		for start := 0; start < len(fixes); start += pageSize {
			if err := cp.Write(ctx, fixes[start:min(start+pageSize, len(fixes))]); err != nil {
				return res, diffs, fmt.Errorf("fixing the target: %w", err)
			}
		}
		res.Fixed = int64(len(fixes))
	}
	for _, w := range back {
		if err := src.Query(w.cql, w.args...).WithContext(ctx).Exec(); err != nil {
			return res, diffs, fmt.Errorf("fixing the origin: %w", err)
		}
	}
	return res, diffs, nil
}

// writeTimes returns each timed cell's write time of a raw row, in the
// query's order of timed cells; -1 for a cell that is not there.
func (q *rangeQuery) writeTimes(raw []rawValue) []int64 {
	var times []int64
	j := 0
	for _, k := range q.kinds {
		j++
		if k != timedCell {
			continue
		}
		wt := int64(-1)
		if !raw[j].null && len(raw[j].b) == 8 {
			wt = int64(binary.BigEndian.Uint64(raw[j].b))
		}
		times = append(times, wt)
		j += 2
	}
	return times
}

// originWrite is one UPDATE of the origin.
type originWrite struct {
	cql  string
	args []any
}

// newerCells returns the UPDATEs that give the origin a target row's
// cells that are newer than the origin's (originTimes, nil when the
// origin lacks the row), one per write time and TTL, each at that write
// time and with the TTL left. A cell the target lacks, a collection or
// user type (CQL gives no write time for them) and a row of keys alone
// are not written back.
func (q *rangeQuery) newerCells(raw []rawValue, originTimes []int64) []originWrite {
	type group struct {
		wt   int64
		ttl  int32
		sets []string
		vals []any
	}
	var groups []*group
	var where []string
	var keys []any
	j, timed := 0, 0
	for c, k := range q.kinds {
		v := raw[j]
		j++
		name := pgschema.QuoteIdentifier(q.columns[c])
		if k == keyCell {
			if !v.null { // a partition of static cells alone has no clustering values
				where = append(where, name+" = ?")
				keys = append(keys, gocqlRaw(v.bytes()))
			}
			continue
		}
		if k != timedCell {
			continue
		}
		wtRaw, ttlRaw := raw[j], raw[j+1]
		j += 2
		ot := int64(-1)
		if originTimes != nil {
			ot = originTimes[timed]
		}
		timed++
		if v.null || wtRaw.null || len(wtRaw.b) != 8 {
			continue
		}
		wt := int64(binary.BigEndian.Uint64(wtRaw.b))
		if wt <= ot {
			continue
		}
		var ttl int32
		if !ttlRaw.null && len(ttlRaw.b) == 4 {
			ttl = int32(binary.BigEndian.Uint32(ttlRaw.b))
		}
		var g *group
		for _, x := range groups {
			if x.wt == wt && x.ttl == ttl {
				g = x
			}
		}
		if g == nil {
			g = &group{wt: wt, ttl: ttl}
			groups = append(groups, g)
		}
		g.sets = append(g.sets, name+" = ?")
		g.vals = append(g.vals, gocqlRaw(v.bytes()))
	}
	out := make([]originWrite, 0, len(groups))
	for _, g := range groups {
		cql := fmt.Sprintf("UPDATE %s USING TIMESTAMP ? AND TTL ? SET %s WHERE %s", q.table,
			strings.Join(g.sets, ", "), strings.Join(where, " AND "))
		args := append(append([]any{g.wt, int(g.ttl)}, g.vals...), keys...)
		out = append(out, originWrite{cql: cql, args: args})
	}
	return out
}

// rangeRow is an origin row kept where a range's digests differ: what
// compares (values and write times), its key columns' values for the
// report, and, when fixing, the row as a copy writes it.
type rangeRow struct {
	keys      [][]byte
	signature string
	copy      bulk.CopyRow
	times     []int64 // when fixing the origin: its timed cells' write times
}

// digest hashes a side's rows of range i, in the order they come.
func (q *rangeQuery) digest(ctx context.Context, s *gocql.Session, i, n, pageSize int) (string, int64, error) {
	h := sha256.New()
	var rows int64
	err := q.scan(ctx, s, i, n, pageSize, func(key, sig string, _ []rawValue, _ time.Time) {
		writeString(h, key)
		writeString(h, sig)
		rows++
	})
	return string(h.Sum(nil)), rows, err
}

func writeString(h hash.Hash, s string) {
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], uint32(len(s)))
	h.Write(l[:])
	h.Write([]byte(s))
}

// scan reads a side's rows of range i of n, giving each row's key (its
// key columns' raw values, joined) and signature (the rest but TTLs,
// which count down) with the raw row, valid until each returns.
func (q *rangeQuery) scan(ctx context.Context, s *gocql.Session, i, n, pageSize int,
	each func(key, sig string, raw []rawValue, now time.Time)) error {
	iter := q.iter(ctx, s, i, n, pageSize)
	dest, raw := q.dest()
	var key, sig strings.Builder
	for {
		now := time.Now()
		if !iter.Scan(dest...) {
			break
		}
		key.Reset()
		sig.Reset()
		j := 0
		for _, k := range q.kinds {
			part := &sig
			if k == keyCell {
				part = &key
			}
			appendRaw(part, raw[j])
			j++
			if k == timedCell {
				appendRaw(&sig, raw[j]) // the write time; raw[j+1], the TTL, counts down
				j += 2
			}
		}
		each(key.String(), sig.String(), raw, now)
	}
	return iter.Close()
}

// keys returns a copy of the key columns' values of a raw row.
func (q *rangeQuery) keys(raw []rawValue) [][]byte {
	keys := make([][]byte, 0, q.nkeys)
	j := 0
	for _, k := range q.kinds {
		if k == keyCell {
			keys = append(keys, raw[j].bytes())
		}
		j++
		if k == timedCell {
			j += 2
		}
	}
	return keys
}

// dest returns the scan targets of a row of the query.
func (q *rangeQuery) dest() ([]any, []rawValue) {
	width := 0
	for _, k := range q.kinds {
		width++
		if k == timedCell {
			width += 2
		}
	}
	raw := make([]rawValue, width)
	dest := make([]any, width)
	for j := range raw {
		dest[j] = &raw[j]
	}
	return dest, raw
}

func appendRaw(b *strings.Builder, v rawValue) {
	if v.null {
		b.WriteString("\xff\xff\xff\xff")
		return
	}
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], uint32(len(v.b)))
	b.Write(l[:])
	b.Write(v.b)
}

// keyFormatter returns a function writing a key's values as CQL does,
// column = literal; a value of a type it cannot read shows as a blob.
func keyFormatter(t *Table) func([][]byte) string {
	var names []string
	var types []*pgschema.Type
	for _, c := range t.Columns {
		if c.Kind == "partition_key" || c.Kind == "clustering" {
			names = append(names, pgschema.QuoteIdentifier(c.Name))
			typ, _ := pgschema.ParseType(c.Type, nil)
			types = append(types, typ)
		}
	}
	return func(vals [][]byte) string {
		parts := make([]string, len(vals))
		for i, v := range vals {
			text := "0x" + hex.EncodeToString(v)
			if types[i] != nil {
				if s, err := cqltext.Format(types[i], v); err == nil {
					text = s
					switch types[i].String() {
					case "text", "ascii", "varchar", "inet", "date", "time", "timestamp":
						text = pgschema.QuoteString(s)
					}
				}
			}
			parts[i] = names[i] + " = " + text
		}
		return strings.Join(parts, ", ")
	}
}
