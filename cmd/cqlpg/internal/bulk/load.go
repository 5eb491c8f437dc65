package bulk

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
	"github.com/cqlpg/cqlpg/sharding"
)

// LoadOptions configure a load.
type LoadOptions struct {
	// Timestamp is the write time of every cell, in microseconds; 0 takes
	// the clock once when the load starts (and keeps it when it resumes).
	Timestamp int64
	// BatchRows is the number of file rows applied per batch (default
	// 5000); a batch ends early before a row that repeats a key of it.
	BatchRows int
	// State is the progress file; "" keeps none, so the load cannot resume.
	State string
	// Progress, if set, receives the counters after every batch.
	Progress func(LoadProgress)
	// AfterBatch, if set, runs after each batch is committed and recorded.
	AfterBatch func(batch int)
}

// LoadProgress counts a load's work so far.
type LoadProgress struct {
	Rows       int64 // file rows committed on every replica, this run and before
	Offset     int64 // bytes of the file they take
	Size       int64 // bytes of the file
	Resumed    bool  // the load continues an interrupted one
	StartRows  int64 // rows committed before this run
	StartBytes int64
}

// LoadResult sums up a finished load.
type LoadResult struct {
	Rows      int64
	Resumed   bool
	Timestamp int64
}

// loadState is the progress file: the byte offset and line after the last
// batch committed on every replica, and the load's timestamp, so that a
// load resumed writes the same cells.
type loadState struct {
	Table     string `json:"table"`
	Size      int64  `json:"size"`
	Offset    int64  `json:"offset"`
	Line      int    `json:"line"`
	Rows      int64  `json:"rows"`
	Timestamp int64  `json:"timestamp"`
}

// row is one file row ready to stage.
type row struct {
	replicas []int
	rows     []byte // staged tuple of the main table, nil for a static-only row
	static   []byte // staged tuple of the static table, nil when none
}

type batch struct {
	rows   []row
	offset int64
	line   int
	count  int64
}

// Load loads the CSV file path into keyspace.table.
func (c *Cluster) Load(ctx context.Context, keyspace, table, path string, opts LoadOptions) (LoadResult, error) {
	t, placement, err := c.table(keyspace, table)
	if err != nil {
		return LoadResult{}, err
	}
	if t.IsCounter() {
		return LoadResult{}, fmt.Errorf("table %s.%s has counters, which a load cannot write", keyspace, table)
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = 5000
	}
	f, err := os.Open(path)
	if err != nil {
		return LoadResult{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return LoadResult{}, err
	}
	r := newCSVReader(f, 0, 0)
	header, _, err := r.read(nil)
	if err == io.EOF {
		return LoadResult{}, errors.New("the file is empty: it needs a header row of column names")
	}
	if err != nil {
		return LoadResult{}, err
	}
	cols, err := headerColumns(t, header)
	if err != nil {
		return LoadResult{}, &CSVError{Line: 1, Err: err}
	}
	st, err := buildStatements(t, cols)
	if err != nil {
		return LoadResult{}, err
	}
	state := loadState{Table: t.QualifiedName(), Size: fi.Size(), Offset: r.offset, Line: r.line, Timestamp: opts.Timestamp}
	resumed := false
	if opts.State != "" {
		if old, ok := readState(opts.State); ok && old.Table == state.Table && old.Size == state.Size && old.Offset >= r.offset {
			if opts.Timestamp == 0 || opts.Timestamp == old.Timestamp {
				state, resumed = old, true
			}
		}
	}
	if state.Timestamp == 0 {
		state.Timestamp = time.Now().UnixMicro()
	}
	var expiry *int32
	if d, ok := t.Options[pgschema.OptDefaultTimeToLive]; ok {
		if ttl, _ := strconv.ParseInt(d, 10, 32); ttl > 0 {
			e := int32(time.Now().Unix() + ttl)
			expiry = &e
		}
	}
	if resumed {
		if _, err := f.Seek(state.Offset, io.SeekStart); err != nil {
			return LoadResult{}, err
		}
		r = newCSVReader(f, state.Offset, state.Line)
	}

	conns := make([]*pgx.Conn, len(c.URLs))
	defer func() {
		for _, conn := range conns {
			if conn != nil {
				conn.Close(context.Background())
			}
		}
	}()
	prog := LoadProgress{Rows: state.Rows, Offset: state.Offset, Size: state.Size, Resumed: resumed,
		StartRows: state.Rows, StartBytes: state.Offset}
	if opts.Progress != nil {
		opts.Progress(prog)
	}

	ctx, cancel := context.WithCancel(ctx)
	batches := make(chan batch, 1)
	var readErr error
	go func() {
		defer close(batches)
		readErr = c.readBatches(ctx, r, t, placement, cols, st, opts.BatchRows, batches)
	}()
	defer func() {
		// Stop the reader and wait for it, whatever ends the load.
		cancel()
		for range batches {
		}
	}()
	n := 0
	for b := range batches {
		if err := c.apply(ctx, conns, t, st, b, state.Timestamp, expiry); err != nil {
			return LoadResult{Rows: state.Rows, Resumed: resumed, Timestamp: state.Timestamp}, err
		}
		state.Offset, state.Line, state.Rows = b.offset, b.line, state.Rows+b.count
		if opts.State != "" {
			if err := writeState(opts.State, state); err != nil {
				return LoadResult{}, err
			}
		}
		prog.Rows, prog.Offset = state.Rows, state.Offset
		if opts.Progress != nil {
			opts.Progress(prog)
		}
		n++
		if opts.AfterBatch != nil {
			opts.AfterBatch(n)
		}
	}
	res := LoadResult{Rows: state.Rows, Resumed: resumed, Timestamp: state.Timestamp}
	if readErr != nil {
		return res, readErr
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if opts.State != "" {
		os.Remove(opts.State)
	}
	return res, nil
}

// headerColumns maps the header's names to the table's columns: each
// name as written, or folded to lower case, or double-quoted.
func headerColumns(t *pgschema.Table, header []Field) ([]*pgschema.Column, error) {
	cols := make([]*pgschema.Column, len(header))
	seen := map[*pgschema.Column]bool{}
	for i, f := range header {
		name := strings.TrimSpace(f.Text)
		c := t.Column(name)
		if c == nil && len(name) > 1 && name[0] == '"' && name[len(name)-1] == '"' {
			c = t.Column(strings.ReplaceAll(name[1:len(name)-1], `""`, `"`))
		}
		if c == nil {
			c = t.Column(strings.ToLower(name))
		}
		if c == nil {
			return nil, fmt.Errorf("column %q of the header is not a column of %s", name, t.QualifiedName())
		}
		if seen[c] {
			return nil, fmt.Errorf("column %s appears twice in the header", c.Name)
		}
		seen[c] = true
		cols[i] = c
	}
	for _, c := range t.PartitionKey {
		if !seen[c] {
			return nil, fmt.Errorf("the header has no column %s, which is part of the primary key", c.Name)
		}
	}
	static := false
	for _, c := range cols {
		static = static || c.Kind == pgschema.Static
	}
	for _, c := range t.Clustering {
		if !seen[c] && !static {
			return nil, fmt.Errorf("the header has no column %s, which is part of the primary key", c.Name)
		}
	}
	return cols, nil
}

// readBatches parses the file's rows into batches of staged tuples.
func (c *Cluster) readBatches(ctx context.Context, r *csvReader, t *pgschema.Table, placement *sharding.Placement,
	cols []*pgschema.Column, st *statements, size int, out chan<- batch) error {
	conv := newConverter(t, cols, st)
	b := batch{}
	keys := map[string]bool{}
	statics := map[string]string{}
	var fields []Field
	send := func() bool {
		select {
		case out <- b:
		case <-ctx.Done():
			return false
		}
		b = batch{rows: make([]row, 0, size)}
		clear(keys)
		clear(statics)
		return true
	}
	for {
		before, beforeLine := r.offset, r.line
		rec, line, err := r.read(fields)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		fields = rec
		if len(rec) != len(cols) {
			return &CSVError{Line: line, Err: fmt.Errorf("%d fields where the header has %d", len(rec), len(cols))}
		}
		rw, key, skey, sval, err := conv.row(rec, line, placement)
		if err != nil {
			return err
		}
		// A batch never holds a key twice, nor one partition's static
		// row with two values: ON CONFLICT cannot touch a row twice, and
		// the gateway would apply such rows one after the other.
		old, seenStatic := statics[skey]
		if (rw.rows != nil && keys[key]) || (rw.static != nil && seenStatic && old != sval) {
			b.offset, b.line = before, beforeLine
			if !send() {
				return ctx.Err()
			}
			seenStatic = false
		}
		if rw.rows != nil {
			keys[key] = true
		}
		if rw.static != nil {
			if seenStatic {
				rw.static = nil // the same static row is already staged
			} else {
				statics[skey] = sval
			}
		}
		b.rows = append(b.rows, rw)
		b.count++
		if len(b.rows) >= size {
			b.offset, b.line = r.offset, r.line
			if !send() {
				return ctx.Err()
			}
		}
	}
	if len(b.rows) > 0 {
		b.offset, b.line = r.offset, r.line
		if !send() {
			return ctx.Err()
		}
	}
	return nil
}

// converter turns a file row into staged tuples, in Postgres's binary
// COPY form.
type converter struct {
	t     *pgschema.Table
	cols  []*pgschema.Column
	st    *statements
	pos   map[*pgschema.Column]int
	vals  [][]byte
	pk    [][]byte
	nrows int
	nstat int
}

func newConverter(t *pgschema.Table, cols []*pgschema.Column, st *statements) *converter {
	cv := &converter{t: t, cols: cols, st: st, pos: map[*pgschema.Column]int{}, vals: make([][]byte, len(cols)),
		nrows: len(st.rows.names), nstat: len(st.static.names)}
	for i, c := range cols {
		cv.pos[c] = i
	}
	return cv
}

func (cv *converter) row(rec []Field, line int, placement *sharding.Placement) (row, string, string, string, error) {
	fail := func(c *pgschema.Column, err error) (row, string, string, string, error) {
		return row{}, "", "", "", &CSVError{Line: line, Column: c.Name, Err: err}
	}
	for i, f := range rec {
		c := cv.cols[i]
		if f.Text == "" && !f.Quoted {
			cv.vals[i] = nil
			continue
		}
		v, err := cqltext.Parse(c.Type, f.Text)
		if err != nil {
			return fail(c, err)
		}
		cv.vals[i] = v
	}
	cv.pk = cv.pk[:0]
	for _, c := range cv.t.PartitionKey {
		v := cv.vals[cv.pos[c]]
		if v == nil {
			return fail(c, errors.New("null value in a partition key column"))
		}
		// A partition key of one column may not be empty; a composite
		// one never is, holding each part's length.
		if len(v) == 0 && len(cv.t.PartitionKey) == 1 {
			return fail(c, errors.New("Key may not be empty"))
		}
		if len(cv.t.PartitionKey) > 1 && len(v) > sharding.MaxKeyComponentLen {
			return fail(c, errors.New("partition key component too long"))
		}
		cv.pk = append(cv.pk, v)
	}
	token := sharding.KeyToken(cv.pk)
	rw := row{replicas: placement.Replicas(token)}
	var key bytes.Buffer
	binary.Write(&key, binary.BigEndian, int64(token))
	for _, v := range cv.pk {
		appendKeyPart(&key, v)
	}
	skey := key.String()
	staticOnly, nullClustering := true, (*pgschema.Column)(nil)
	for _, c := range cv.t.Clustering {
		i, ok := cv.pos[c]
		if ok && cv.vals[i] != nil {
			staticOnly = false
		} else if nullClustering == nil {
			nullClustering = c
		}
	}
	if len(cv.t.Clustering) == 0 {
		staticOnly = false
	}
	if staticOnly && len(cv.st.statIdx) == 0 {
		staticOnly = false
	}
	if !staticOnly && nullClustering != nil {
		return fail(nullClustering, errors.New("null value in a clustering column"))
	}
	tok := binary.BigEndian.AppendUint64(nil, uint64(token))
	if !staticOnly {
		tup := tupleHeader(nil, cv.nrows)
		tup = appendField(tup, tok)
		for _, c := range cv.t.KeyColumns() {
			v := cv.vals[cv.pos[c]]
			if c.Kind == pgschema.Clustering {
				appendKeyPart(&key, v)
			}
			pg, exact, err := toPG(c, v)
			if err != nil {
				return fail(c, err)
			}
			tup = appendField(tup, pg)
			if c.OrderColumn() != "" {
				o, err := pgschema.OrderKey(c.Type, v)
				if err != nil {
					return fail(c, err)
				}
				tup = appendField(tup, c.BoundOrderKey(o))
			}
			if c.HasExact() {
				tup = appendField(tup, exact)
			}
		}
		for _, c := range cv.st.rowsIdx {
			var err error
			if tup, err = appendCell(tup, c, cv.vals[cv.pos[c]]); err != nil {
				return fail(c, err)
			}
		}
		rw.rows = tup
	}
	var sval bytes.Buffer
	if len(cv.st.statIdx) > 0 {
		tup := tupleHeader(nil, cv.nstat)
		tup = appendField(tup, tok)
		for _, c := range cv.t.PartitionKey {
			pg, exact, err := toPG(c, cv.vals[cv.pos[c]])
			if err != nil {
				return fail(c, err)
			}
			tup = appendField(tup, pg)
			if c.HasExact() {
				tup = appendField(tup, exact)
			}
		}
		for _, c := range cv.st.statIdx {
			v := cv.vals[cv.pos[c]]
			appendKeyPart(&sval, v)
			var err error
			if tup, err = appendCell(tup, c, v); err != nil {
				return fail(c, err)
			}
		}
		rw.static = tup
	}
	return rw, key.String(), skey, sval.String(), nil
}

// appendKeyPart appends a value to a key made of several, unambiguously.
func appendKeyPart(b *bytes.Buffer, v []byte) {
	if v == nil {
		b.Write([]byte{0xff, 0xff, 0xff, 0xff})
		return
	}
	binary.Write(b, binary.BigEndian, uint32(len(v)))
	b.Write(v)
}

// toPG converts a value to its stored binary form, as the gateway binds
// it, and gives its exact companion's value: for a column that has one
// and a value its natural column cannot hold exactly, the placeholder
// stored instead and the CQL bytes; else null.
func toPG(c *pgschema.Column, v []byte) (pg, exact []byte, err error) {
	if v == nil {
		return nil, nil, nil
	}
	s, err := pgschema.StorageOf(c.Type)
	if err != nil {
		return nil, nil, err
	}
	if err := pgschema.Validate(c.Type, v); err != nil {
		return nil, nil, err
	}
	if p, inexact := c.Placeholder(nil, v); inexact {
		return p, v, nil
	}
	if s.ToPG == nil {
		return v, nil, nil
	}
	pg, err = s.ToPG(nil, v)
	return pg, nil, err
}

// appendCell appends a cell's staged fields: the value (null for the
// empty value of a column with an empty flag), the flag and the exact
// companion.
func appendCell(tup []byte, c *pgschema.Column, v []byte) ([]byte, error) {
	flag, hasExact := c.EmptyColumn() != "", c.HasExact()
	if flag && v != nil && len(v) == 0 {
		tup = appendField(appendField(tup, nil), []byte{1})
		if hasExact {
			tup = appendField(tup, nil)
		}
		return tup, nil
	}
	pg, exact, err := toPG(c, v)
	if err != nil {
		return nil, err
	}
	if pg == nil && v != nil {
		pg = []byte{}
	}
	tup = appendField(tup, pg)
	if flag {
		tup = appendField(tup, nil)
	}
	if hasExact {
		tup = appendField(tup, exact)
	}
	return tup, nil
}

// Binary COPY framing: a header, then per tuple its field count and each
// field's length (-1 for null) and bytes, then a trailer.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

func tupleHeader(dst []byte, n int) []byte { return binary.BigEndian.AppendUint16(dst, uint16(n)) }

func appendField(dst, v []byte) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...)
}

// apply writes a batch to every replica of its rows, the shards in
// parallel, each in one transaction: COPY into the staging tables, then
// the statements that apply them.
func (c *Cluster) apply(ctx context.Context, conns []*pgx.Conn, t *pgschema.Table, st *statements, b batch, ts int64, expiry *int32) error {
	rows := make([][]byte, len(conns))
	static := make([][]byte, len(conns))
	for _, r := range b.rows {
		for _, s := range r.replicas {
			if r.rows != nil {
				if rows[s] == nil {
					rows[s] = append([]byte(nil), copyHeader...)
				}
				rows[s] = append(rows[s], r.rows...)
			}
			if r.static != nil {
				if static[s] == nil {
					static[s] = append([]byte(nil), copyHeader...)
				}
				static[s] = append(static[s], r.static...)
			}
		}
	}
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for s := range conns {
		if rows[s] == nil && static[s] == nil {
			continue
		}
		wg.Go(func() {
			if err := c.applyShard(ctx, conns, s, st, rows[s], static[s], ts, expiry); err != nil {
				errs[s] = fmt.Errorf("shard %s: %w", c.Ring.Shards()[s].Name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *Cluster) applyShard(ctx context.Context, conns []*pgx.Conn, s int, st *statements, rows, static []byte, ts int64, expiry *int32) error {
	conn := conns[s]
	if conn == nil || conn.IsClosed() {
		var err error
		if conn, err = c.connect(ctx, s); err != nil {
			return err
		}
		for _, q := range st.create {
			if _, err := conn.Exec(ctx, q); err != nil {
				conn.Close(ctx)
				return err
			}
		}
		conns[s] = conn
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if static != nil {
		if err := copyIn(ctx, conn, stageStatic, st.static.names, static); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, st.applyStatic, ts, expiry); err != nil {
			return err
		}
	}
	if rows != nil {
		if err := copyIn(ctx, conn, stageRows, st.rows.names, rows); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, st.applyRows, ts, expiry); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// copyIn streams binary COPY data into a staging table.
func copyIn(ctx context.Context, conn *pgx.Conn, table string, cols []string, data []byte) error {
	data = binary.BigEndian.AppendUint16(data, 0xffff)
	_, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(data),
		fmt.Sprintf("COPY pg_temp.%s (%s) FROM STDIN (FORMAT binary)", table, quoteAll(cols)))
	return err
}
