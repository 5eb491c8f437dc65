package repair

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Anti-entropy repair brings the replicas of a table to the reconciled
// union of their data, as Cassandra's repair does, for what hints and
// read repair leave behind: writes a replica missed while down past the
// hint window, rows nobody reads, deletions. Repair goes through the ring
// one token range at a time, on the replicas the keyspace's placement
// gives the range, and settles each range as sync.go says. It
// reads and writes through the shard pools, with the gateway's own
// write semantics, so it can run while clients write.
//
// Counter tables are not repaired: a replica holds a counter's total
// only, and two totals cannot be merged without knowing which increments
// each one missed.

// Options says what a repair covers and how it reports.
type Options struct {
	// Keyspace and Table name what to repair: one table, every table of a
	// keyspace (Table empty), or every table (both empty).
	Keyspace, Table string
	// Progress, when set, is called after each token range of each table
	// and on each replica failure, one call at a time.
	Progress func(Progress)
	// Timeout bounds each statement on a replica; a replica that does not
	// answer in time is left out of the rest of the repair. Zero means 10
	// seconds.
	Timeout time.Duration
	// Parallel is how many token ranges are repaired at once; zero
	// means 2.
	Parallel int
	// Status, when set, follows the repair for the gateway's metrics.
	Status *Status
}

// Progress reports a repair under way.
type Progress struct {
	// Keyspace and Table name the table of the last range done.
	Keyspace, Table string
	// RangesDone of RangesTotal token ranges are done (a range counts
	// once per table); RangesRepaired of them had replicas that differed.
	RangesDone, RangesTotal, RangesRepaired int
	// RowsMoved counts rows sent to a replica that lacked them or held
	// them otherwise, once per replica they were sent to.
	RowsMoved int64
	// Err is the failure this report is about, if any: a replica that
	// could not take part, which the rest of the range does without.
	Err error
}

// Result sums up a repair.
type Result struct {
	Tables                 int
	Ranges, RangesRepaired int
	RowsMoved              int64
	// Skipped names the tables left out, with why.
	Skipped []string
	// Views sums up the comparisons of the views repaired with their
	// bases (views.go).
	Views    ViewCheck
	Duration time.Duration
}

// repairTable is a table to repair and its keyspace's placement.
type repairTable struct {
	stmts     *repairStmts
	placement *sharding.Placement
}

// tablesToRepair lists the tables a repair covers.
func tablesToRepair(c *cluster.Cluster, opts Options) ([]repairTable, []string, error) {
	schema, topo := c.Schema(), c.Topology()
	if opts.Keyspace == "" && opts.Table != "" {
		return nil, nil, errors.New("a table to repair needs its keyspace")
	}
	var keyspaces []*pgschema.Keyspace
	if opts.Keyspace != "" {
		k := schema.Keyspace(opts.Keyspace)
		if k == nil || k.Virtual || pgschema.IsSystemKeyspace(k.Name) {
			return nil, nil, fmt.Errorf("keyspace %s does not exist", opts.Keyspace)
		}
		keyspaces = append(keyspaces, k)
	} else {
		for _, k := range schema.Keyspaces() {
			if !k.Virtual && !pgschema.IsSystemKeyspace(k.Name) {
				keyspaces = append(keyspaces, k)
			}
		}
	}
	var tables []repairTable
	var skipped []string
	for _, k := range keyspaces {
		names := k.TableNames()
		if opts.Table != "" {
			if k.Tables[opts.Table] == nil {
				return nil, nil, fmt.Errorf("table %s.%s does not exist", k.Name, opts.Table)
			}
			names = []string{opts.Table}
		}
		for _, name := range names {
			t := k.Tables[name]
			if t.IsCounter() {
				skipped = append(skipped, t.QualifiedName()+": counter tables cannot be repaired")
				continue
			}
			tables = append(tables, repairTable{stmts: statementsFor(t), placement: topo.Placement(k.Replication)})
		}
	}
	return tables, skipped, nil
}

// Run repairs what opts names across its replicas, one token range at a
// time.
func Run(ctx context.Context, c *cluster.Cluster, opts Options) (Result, error) {
	began := time.Now()
	tables, skipped, err := tablesToRepair(c, opts)
	if err != nil {
		return Result{}, err
	}
	topo := c.Topology()
	ring := topo.Ring
	tokens := ring.Tokens()
	res := Result{Tables: len(tables), Skipped: skipped}
	progress := Progress{RangesTotal: len(tables) * len(tokens)}
	gen := opts.Status.begin(progress.RangesTotal)
	defer opts.Status.end(gen)
	var mu sync.Mutex // serializes progress and its reports
	report := func(update func(p *Progress)) {
		mu.Lock()
		defer mu.Unlock()
		update(&progress)
		opts.Status.update(gen, progress)
		if opts.Progress != nil {
			opts.Progress(progress)
		}
		progress.Err = nil
	}
	run := newRepairRun(topo, opts.Timeout)
	run.onError = func(err error) {
		report(func(p *Progress) { p.Err = err; p.RowsMoved = run.moved.Load() })
	}

	type job struct {
		table repairTable
		index int
	}
	jobs := make(chan job)
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = 2
	}
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for j := range jobs {
				differed := false
				rg := ring.Range(j.index)
				replicas := j.table.placement.RangeReplicas(j.index)
				for _, piece := range rg.Inclusive() {
					d, err := run.reconcile(ctx, j.table.stmts, piece[0], piece[1], replicas, false)
					differed = differed || d
					if err != nil {
						break
					}
				}
				if ctx.Err() != nil {
					continue
				}
				t := j.table.stmts.table
				report(func(p *Progress) {
					p.Keyspace, p.Table = t.Keyspace, t.Name
					p.RangesDone++
					if differed {
						p.RangesRepaired++
					}
					p.RowsMoved = run.moved.Load()
				})
			}
		})
	}
feed:
	for _, t := range tables {
		for i := range tokens {
			select {
			case jobs <- job{t, i}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	mu.Lock()
	res.Ranges, res.RangesRepaired = progress.RangesDone, progress.RangesRepaired
	mu.Unlock()
	res.RowsMoved = run.moved.Load()
	if err := run.err(); err == nil && ctx.Err() == nil {
		schema := c.Schema()
		for _, v := range viewsToCheck(schema, tables) {
			vc, err := checkView(ctx, c, v, schema.Table(v.Keyspace, v.View.Base))
			res.Views.Relogged += vc.Relogged
			res.Views.Undefined += vc.Undefined
			if err != nil {
				res.Duration = time.Since(began)
				return res, err
			}
		}
	}
	res.Duration = time.Since(began)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, run.err()
}

// viewsToCheck returns the views among the tables repaired, and the
// views of the base tables among them.
func viewsToCheck(schema *pgschema.Schema, tables []repairTable) []*pgschema.Table {
	var out []*pgschema.Table
	seen := map[*pgschema.Table]bool{}
	add := func(v *pgschema.Table) {
		if !seen[v] && schema.Table(v.Keyspace, v.View.Base) != nil {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, rt := range tables {
		t := rt.stmts.table
		if t.IsView() {
			add(t)
			continue
		}
		if k := schema.Keyspace(t.Keyspace); k != nil {
			for _, v := range k.ViewsOf(t.Name) {
				add(v)
			}
		}
	}
	return out
}

// Partition repairs one partition of a table, given its partition key's
// components, across its replicas: one statement on each to read it, and
// one transaction on each that lacks something to write.
func Partition(ctx context.Context, c *cluster.Cluster, keyspace, table string, key [][]byte) (Result, error) {
	t := c.Schema().Table(keyspace, table)
	if t == nil || t.Virtual {
		return Result{}, fmt.Errorf("table %s.%s does not exist", keyspace, table)
	}
	began := time.Now()
	moved, err := Token(ctx, c, t, int64(sharding.KeyToken(key)))
	return Result{Tables: 1, RowsMoved: moved, Duration: time.Since(began)}, err
}

// ErrCounter refuses to repair a counter table.
var ErrCounter = errors.New("counter tables cannot be repaired")

// Token repairs the partition of t at token across its
// replicas, for blocking read repair: one statement on each replica
// reads the partition whole (or, past repairPartitionRows rows of a part,
// the partition is copied in pages), and each replica that lacks
// something gets it in one transaction. Partitions sharing the token are
// repaired with it. It returns the rows sent.
func Token(ctx context.Context, c *cluster.Cluster, t *pgschema.Table, token int64) (int64, error) {
	topo, placement, err := repairPlacement(c, t)
	if err != nil {
		return 0, err
	}
	run := newRepairRun(topo, 0)
	err = run.leaf(ctx, statementsFor(t), token, token, placement.Replicas(sharding.Token(token)), repairPartitionRows)
	return run.moved.Load(), errors.Join(err, run.err())
}

// Range repairs the token range (start, end] of t across the
// replicas of each ring range it covers, for a range scan whose replicas
// disagreed. It returns the rows sent.
func Range(ctx context.Context, c *cluster.Cluster, t *pgschema.Table, start, end int64) (int64, error) {
	topo, placement, err := repairPlacement(c, t)
	if err != nil {
		return 0, err
	}
	run := newRepairRun(topo, 0)
	st := statementsFor(t)
	tokens := topo.Ring.Tokens()
	for _, piece := range (sharding.Range{Start: sharding.Token(start), End: sharding.Token(end)}).Inclusive() {
		for lo := piece[0]; ; {
			i := topo.Ring.RangeIndex(sharding.Token(lo))
			hi := int64(tokens[i])
			if hi < lo { // past the last token: the range that wraps
				hi = math.MaxInt64
			}
			hi = min(hi, piece[1])
			if _, err := run.reconcile(ctx, st, lo, hi, placement.RangeReplicas(i), false); err != nil {
				return run.moved.Load(), err
			}
			if hi >= piece[1] {
				break
			}
			lo = hi + 1
		}
	}
	return run.moved.Load(), run.err()
}

// repairPlacement returns what repairing t needs from the current
// topology.
func repairPlacement(c *cluster.Cluster, t *pgschema.Table) (*sharding.Topology, *sharding.Placement, error) {
	if t.IsCounter() {
		return nil, nil, ErrCounter
	}
	k := c.Schema().Keyspace(t.Keyspace)
	if k == nil {
		return nil, nil, fmt.Errorf("keyspace %s does not exist", t.Keyspace)
	}
	topo := c.Topology()
	return topo, topo.Placement(k.Replication), nil
}
