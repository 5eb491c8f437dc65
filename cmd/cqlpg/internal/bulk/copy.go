package bulk

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Copier writes rows read from another cluster into one table through
// the loader's staging path, each cell with its own write time and
// expiry, so that a copy and the writes made meanwhile commute: whichever
// lands second, the newer cell wins.
type Copier struct {
	c         *Cluster
	t         *pgschema.Table
	placement *sharding.Placement
	st        *statements
	conv      *converter
	conns     []*pgx.Conn
}

// CopyRow is one row to copy: a value per column of the copier (the CQL
// protocol's encoding, nil for null) and when each was written, and the
// row marker's write time and expiry.
type CopyRow struct {
	Values [][]byte
	Times  []CellTime
	Marker CellTime
}

// NewCopier prepares copying rows of columns (the primary key's columns
// among them) into keyspace.table.
func (c *Cluster) NewCopier(keyspace, table string, columns []string) (*Copier, error) {
	t, placement, err := c.table(keyspace, table)
	if err != nil {
		return nil, err
	}
	if t.IsCounter() {
		return nil, fmt.Errorf("table %s.%s has counters, which a copy cannot write with their write times", keyspace, table)
	}
	cols := make([]*pgschema.Column, len(columns))
	for i, name := range columns {
		if cols[i] = t.Column(name); cols[i] == nil {
			return nil, fmt.Errorf("table %s.%s has no column %s", keyspace, table, name)
		}
	}
	st, err := buildStatementsOf(t, cols, true)
	if err != nil {
		return nil, err
	}
	return &Copier{c: c, t: t, placement: placement, st: st, conv: newConverter(t, cols, st),
		conns: make([]*pgx.Conn, len(c.URLs))}, nil
}

// Write writes rows to every replica of each, in as few transactions per
// shard as the rows allow (a batch holds a row once).
func (cp *Copier) Write(ctx context.Context, rows []CopyRow) error {
	b := batch{}
	keys := map[string]bool{}
	statics := map[string]bool{}
	for i, r := range rows {
		copy(cp.conv.vals, r.Values)
		copy(cp.conv.times, r.Times)
		cp.conv.marker = r.Marker
		rw, key, skey, _, err := cp.conv.stage(i+1, cp.placement)
		if err != nil {
			return err
		}
		if rw.rows != nil && keys[key] {
			if err := cp.c.apply(ctx, cp.conns, cp.t, cp.st, b, 0, nil); err != nil {
				return err
			}
			b = batch{}
			clear(keys)
			clear(statics)
		}
		if rw.rows != nil {
			keys[key] = true
		}
		if rw.static != nil {
			if statics[skey] {
				rw.static = nil // the partition's static cells, staged already
			}
			statics[skey] = true
		}
		b.rows = append(b.rows, rw)
		b.count++
	}
	if len(b.rows) == 0 {
		return nil
	}
	return cp.c.apply(ctx, cp.conns, cp.t, cp.st, b, 0, nil)
}

// Close closes the copier's connections.
func (cp *Copier) Close() {
	for _, conn := range cp.conns {
		if conn != nil {
			conn.Close(context.Background())
		}
	}
}
