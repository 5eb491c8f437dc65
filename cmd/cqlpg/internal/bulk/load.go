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
	args := []any{ts, expiry}
	if st.perCell {
		args = nil // the staged rows carry their times
	}
	if static != nil {
		if err := copyIn(ctx, conn, stageStatic, st.static.names, static); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, st.applyStatic, args...); err != nil {
			return err
		}
	}
	if rows != nil {
		if err := copyIn(ctx, conn, stageRows, st.rows.names, rows); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, st.applyRows, args...); err != nil {
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
