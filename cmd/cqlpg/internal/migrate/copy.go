package migrate

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/bulk"
	"github.com/cqlpg/cqlpg/pgschema"
)

// CopyOptions shape a copy.
type CopyOptions struct {
	RangeOptions
	// Rate caps the rows copied a second, all workers together; 0 for
	// no cap.
	Rate float64
	// State is the file recording the ranges copied, for a copy started
	// again to go on from; "" for none.
	State string
	// Progress, when set, is called as ranges complete.
	Progress func(CopyProgress)
	// Target is a session on the target, which counter tables are
	// written through.
	Target *gocql.Session
}

// CopyProgress is how far a table's copy is.
type CopyProgress struct {
	Table              string
	Ranges, RangesDone int
	// Rows are the rows copied in all, StartRows those copied before
	// this run (a resumed copy).
	Rows, StartRows int64
	// Resumed is set on the first report of a copy that goes on from
	// ranges recorded as done.
	Resumed bool
}

// copyState is what the state file records of each table's copy: the
// ranges done, of how many.
type copyState struct {
	Tables map[string]*tableState `json:"tables"`
}

type tableState struct {
	Splits int    `json:"splits"`
	Done   []bool `json:"done"`
	Rows   int64  `json:"rows"`
}

// Copy copies table ks.t of the origin (read through src) into the same
// table of dst, each cell with its write time and remaining TTL.
func Copy(ctx context.Context, src *gocql.Session, dst *bulk.Cluster, ks *Keyspace, t *Table, opts CopyOptions) (int64, error) {
	opts.setDefaults()
	name := pgschema.QuoteIdentifier(ks.Name) + "." + pgschema.QuoteIdentifier(t.Name)
	state, err := loadCopyState(opts.State)
	if err != nil {
		return 0, err
	}
	ts := state.Tables[name]
	if ts == nil || ts.Splits != opts.Splits {
		ts = &tableState{Splits: opts.Splits, Done: make([]bool, opts.Splits)}
		state.Tables[name] = ts
	}
	prog := CopyProgress{Table: name, Ranges: opts.Splits, Rows: ts.Rows, StartRows: ts.Rows}
	for _, d := range ts.Done {
		if d {
			prog.RangesDone++
		}
	}
	if opts.Progress != nil {
		first := prog
		first.Resumed = prog.RangesDone > 0
		opts.Progress(first)
	}
	var mu sync.Mutex // guards prog and state
	limit := newLimiter(opts.Rate)
	copied := func(n int) {
		mu.Lock()
		prog.Rows += int64(n)
		mu.Unlock()
	}
	err = forRanges(ctx, opts.RangeOptions, name, func(i int) bool { return ts.Done[i] }, func() (func(context.Context, int) error, func(), error) {
		var copyRange func(ctx context.Context, i int) (int64, error)
		closeWorker := func() {}
		if isCounterTable(t) {
			q := newCounterQuery(ks, t)
			copyRange = func(ctx context.Context, i int) (int64, error) {
				return q.copyRange(ctx, src, opts.Target, i, opts.Splits, opts.PageSize, limit, copied)
			}
		} else {
			q := newRangeQuery(ks, t)
			cp, err := dst.NewCopier(ks.Name, t.Name, q.columns)
			if err != nil {
				return nil, nil, err
			}
			copyRange = func(ctx context.Context, i int) (int64, error) {
				return q.copyRange(ctx, src, cp, i, opts.Splits, opts.PageSize, limit, copied)
			}
			closeWorker = cp.Close
		}
		work := func(ctx context.Context, i int) error {
			n, err := copyRange(ctx, i)
			if err != nil {
				return err
			}
			mu.Lock()
			ts.Done[i], ts.Rows = true, ts.Rows+n
			prog.RangesDone++
			err = saveCopyState(opts.State, state)
			p := prog
			mu.Unlock()
			if opts.Progress != nil {
				opts.Progress(p)
			}
			return err
		}
		return work, closeWorker, nil
	})
	return prog.Rows, err
}

// iter starts reading range i of n through s.
func (q *rangeQuery) iter(ctx context.Context, s *gocql.Session, i, n, pageSize int) *gocql.Iter {
	start, end := rangeBounds(i, n)
	sql := q.sqlNext
	if i == 0 {
		sql = q.sql
	}
	return s.Query(sql, start, end).WithContext(ctx).PageSize(pageSize).Iter()
}

// CheckCopyable reports, together, the tables a copy cannot carry while
// the gateways named in dualWriters run dual writes: those with counters.
func CheckCopyable(ks *Keyspace, tables []*Table, dualWriters []string) error {
	if len(dualWriters) == 0 {
		return nil
	}
	var errs []error
	for _, t := range tables {
		if isCounterTable(t) {
			errs = append(errs, fmt.Errorf("table %s.%s has counters, and dual writes run (%s): a counter is copied as its "+
				"value, which already holds the increments the gateways also write to the target, so they would count twice; "+
				"copy it while no gateway runs with --origin, or leave it out of the copy", pgschema.QuoteIdentifier(ks.Name),
				pgschema.QuoteIdentifier(t.Name), strings.Join(dualWriters, ", ")))
		}
	}
	return errors.Join(errs...)
}

// rangeQuery reads one table's rows by token range, each regular and
// static cell with its write time and TTL where CQL gives them.
type rangeQuery struct {
	table   string   // quoted, with its keyspace
	columns []string // the copier's columns
	kinds   []cellKind
	nkeys   int
	npk     int    // partition key columns, the first keys
	sql     string // the first range's (>=), then the others' (>)
	sqlNext string
}

type cellKind uint8

const (
	keyCell   cellKind = iota // a key column: no write time
	timedCell                 // value, WRITETIME, TTL
	plainCell                 // value only: a non-frozen collection or user type, whose write time CQL does not give, or a counter
)

func newRangeQuery(ks *Keyspace, t *Table) *rangeQuery {
	q := &rangeQuery{table: pgschema.QuoteIdentifier(ks.Name) + "." + pgschema.QuoteIdentifier(t.Name)}
	var sel, pk []string
	for _, c := range t.Columns {
		n := pgschema.QuoteIdentifier(c.Name)
		q.columns = append(q.columns, c.Name)
		switch {
		case c.Kind == "partition_key" || c.Kind == "clustering":
			q.kinds = append(q.kinds, keyCell)
			q.nkeys++
			sel = append(sel, n)
			if c.Kind == "partition_key" {
				pk = append(pk, n)
				q.npk++
			}
		case multiCell(ks, c.Type) || c.Type == "counter":
			q.kinds = append(q.kinds, plainCell)
			sel = append(sel, n)
		default:
			q.kinds = append(q.kinds, timedCell)
			sel = append(sel, n, "WRITETIME("+n+")", "TTL("+n+")")
		}
	}
	base := fmt.Sprintf("SELECT %s FROM %s.%s WHERE token(%s) ", strings.Join(sel, ", "),
		pgschema.QuoteIdentifier(ks.Name), pgschema.QuoteIdentifier(t.Name), strings.Join(pk, ", "))
	q.sql = base + ">= ? AND token(" + strings.Join(pk, ", ") + ") <= ?"
	q.sqlNext = base + "> ? AND token(" + strings.Join(pk, ", ") + ") <= ?"
	return q
}

// multiCell reports whether a column type is a non-frozen collection or
// user type.
func multiCell(ks *Keyspace, typ string) bool {
	if strings.HasPrefix(typ, "frozen<") {
		return false
	}
	if strings.HasPrefix(typ, "list<") || strings.HasPrefix(typ, "set<") || strings.HasPrefix(typ, "map<") {
		return true
	}
	for _, u := range ks.Types {
		if typ == u.Name || typ == pgschema.QuoteIdentifier(u.Name) {
			return true
		}
	}
	return false
}

// copyRange copies the rows of range i of n, page by page.
func (q *rangeQuery) copyRange(ctx context.Context, src *gocql.Session, cp *bulk.Copier, i, n, pageSize int,
	limit *limiter, copied func(int)) (int64, error) {
	iter := q.iter(ctx, src, i, n, pageSize)
	defer iter.Close()
	dest, raw := q.dest()
	var total int64
	batch := make([]bulk.CopyRow, 0, pageSize)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		limit.wait(ctx, len(batch))
		if err := cp.Write(ctx, batch); err != nil {
			return err
		}
		total += int64(len(batch))
		copied(len(batch))
		batch = batch[:0]
		return nil
	}
	for {
		now := time.Now()
		if !iter.Scan(dest...) {
			break
		}
		batch = append(batch, q.row(raw, now))
		if len(batch) == pageSize {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := iter.Close(); err != nil {
		return total, err
	}
	return total, flush()
}

// row turns one origin row into a row to copy. The row marker takes the
// newest of the cells' write times (the read's time for a row of keys
// alone, which no later write is older than) and, when every cell
// expires, the latest expiry; a collection or user type, whose write
// time CQL does not give, takes the marker's.
func (q *rangeQuery) row(raw []rawValue, now time.Time) bulk.CopyRow {
	r := bulk.CopyRow{Values: make([][]byte, len(q.columns)), Times: make([]bulk.CellTime, len(q.columns))}
	var newest int64
	var latest int32
	allExpire, anyCell := true, false
	j := 0
	for i, k := range q.kinds {
		r.Values[i] = raw[j].bytes()
		j++
		if k != timedCell {
			continue
		}
		wt, ttl := raw[j], raw[j+1]
		j += 2
		if wt.null || len(wt.b) != 8 {
			continue
		}
		tm := bulk.CellTime{Writetime: int64(binary.BigEndian.Uint64(wt.b)), Set: true}
		if !ttl.null && len(ttl.b) == 4 {
			tm.Expiry = int32(now.Unix()) + int32(binary.BigEndian.Uint32(ttl.b))
		}
		r.Times[i] = tm
		anyCell = true
		newest = max(newest, tm.Writetime)
		if tm.Expiry == 0 {
			allExpire = false
		}
		latest = max(latest, tm.Expiry)
	}
	r.Marker = bulk.CellTime{Writetime: newest, Set: true}
	if !anyCell {
		r.Marker.Writetime = now.UnixMicro()
	} else if allExpire {
		r.Marker.Expiry = latest
	}
	for i, k := range q.kinds {
		if k == plainCell && r.Values[i] != nil {
			r.Times[i] = bulk.CellTime{Writetime: r.Marker.Writetime, Set: true}
		}
	}
	return r
}

// rawValue takes a value as the protocol encodes it.
type rawValue struct {
	b    []byte
	null bool
}

func (r *rawValue) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	r.null = data == nil
	r.b = append(r.b[:0], data...)
	return nil
}

// bytes returns a copy of the value, nil for null.
func (r *rawValue) bytes() []byte {
	if r.null {
		return nil
	}
	return append([]byte{}, r.b...)
}

// limiter spaces out rows to a rate.
type limiter struct {
	mu   sync.Mutex
	rate float64
	next time.Time
}

func newLimiter(rate float64) *limiter { return &limiter{rate: rate} }

func (l *limiter) wait(ctx context.Context, n int) {
	if l.rate <= 0 {
		return
	}
	l.mu.Lock()
	now := time.Now()
	if l.next.Before(now) {
		l.next = now
	}
	at := l.next
	l.next = l.next.Add(time.Duration(float64(n) / l.rate * float64(time.Second)))
	l.mu.Unlock()
	select {
	case <-time.After(time.Until(at)):
	case <-ctx.Done():
	}
}

func loadCopyState(path string) (*copyState, error) {
	s := &copyState{Tables: map[string]*tableState{}}
	if path == "" {
		return s, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("%s holds no copy state: %w", path, err)
	}
	if s.Tables == nil {
		s.Tables = map[string]*tableState{}
	}
	return s, nil
}

// saveCopyState writes the state atomically: a new file renamed over the
// old one.
func saveCopyState(path string, s *copyState) error {
	if path == "" {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
