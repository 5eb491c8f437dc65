package exec

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/pgschema"
)

// A view made over a table that holds rows is built in the background:
// on each shard, the base partitions are read in token order, a few
// hundred at a time, and their rows logged in the shard's view log, which
// the drains apply as they apply any other update. Each step records in
// cqlpg.view_builds how far the shard's build went, in the step's own
// transaction, so that a build that a gateway's end cut short goes on
// from there under another. Writes to the base during the build log their
// own updates; the view's merge makes the order of the two irrelevant.
// system.built_views and system_distributed.view_build_status show the
// builds as Cassandra does.

// buildPartitions is how many base partitions one build step reads.
const buildPartitions = 500

// buildSlice is how long a shard's build runs at a time before the
// gateway turns to its other work.
const buildSlice = 2 * time.Second

// viewBuildStatus is one shard's build of one view.
type viewBuildStatus struct {
	keyspace, view string
	host           [16]byte
	// logged is set once every base row is logged, done once their
	// updates have applied too.
	logged, done bool
	rows         int64
	next         int64
}

// StartViewBuilds wakes the builder, after a view was made.
func (v *Env) StartViewBuilds() {
	v.views.mu.Lock()
	ch := v.views.build
	v.views.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// RunViews drains every shard's view log and moves the view builds on,
// every viewInterval and whenever a view is made, until ctx ends.
func (v *Env) RunViews(ctx context.Context) {
	v.views.mu.Lock()
	v.views.ctx = ctx
	v.views.build = make(chan struct{}, 1)
	wake := v.views.build
	v.views.mu.Unlock()
	tick := time.NewTicker(viewInterval)
	defer tick.Stop()
	for {
		topo, control := v.Cluster.Snapshot()
		var statuses []viewBuildStatus
		for i, pool := range control {
			if !topo.Shards[i].Pool.Alive() {
				continue
			}
			host := topo.Shards[i].Info.HostID
			v.requestPass(ctx, host, pool)
			st, err := v.buildShard(ctx, host, pool)
			if err != nil && ctx.Err() == nil {
				v.Log.Warn("cannot build the views of a shard", "shard", topo.Shards[i].Info.Name, "err", err)
			}
			statuses = append(statuses, st...)
		}
		v.views.mu.Lock()
		v.views.status = statuses
		v.views.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-wake:
		}
	}
}

// buildShard moves the shard's unfinished view builds on, for up to
// buildSlice, and returns where all its builds stand.
func (v *Env) buildShard(ctx context.Context, host [16]byte, pool *pgxpool.Pool) ([]viewBuildStatus, error) {
	list := func() ([]viewBuildStatus, error) {
		rows, _ := pool.Query(ctx, pgschema.ViewBuildsSQL)
		return pgx.CollectRows(rows, func(row pgx.CollectableRow) (viewBuildStatus, error) {
			s := viewBuildStatus{host: host}
			var status string
			err := row.Scan(&s.keyspace, &s.view, &status, &s.logged, &s.next, &s.rows)
			s.done = status == "SUCCESS"
			return s, err
		})
	}
	builds, err := list()
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(buildSlice)
	moved := false
	for _, b := range builds {
		if b.done || b.logged {
			continue
		}
		for time.Now().Before(deadline) {
			more, err := v.buildStep(ctx, pool, b.keyspace, b.view)
			if err != nil {
				return builds, err
			}
			moved = true
			if !more {
				break
			}
		}
	}
	if !moved {
		return builds, nil
	}
	select {
	case <-v.requestPass(ctx, host, pool).done:
	case <-ctx.Done():
	}
	return list()
}

// buildStep runs one step of a shard's build of a view, and reports
// whether the build goes on. A view this gateway does not know yet waits
// for the next round; another gateway's step in progress is left to it.
func (v *Env) buildStep(ctx context.Context, pool *pgxpool.Pool, keyspace, name string) (bool, error) {
	schema := v.Cluster.Schema()
	view := schema.Table(keyspace, name)
	if view == nil || view.View == nil {
		return false, nil
	}
	base := schema.Table(keyspace, view.View.Base)
	more := false
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var next int64
		if err := tx.QueryRow(ctx, pgschema.ViewBuildLockSQL, keyspace, name).Scan(&next); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			return err
		}
		var last *int64
		var logged, updated int64
		if err := tx.QueryRow(ctx, view.ViewBuildSQL(base), next, buildPartitions, keyspace, name).Scan(&last, &logged, &updated); err != nil {
			return err
		}
		v.Metrics.ViewBuildRows.Add(float64(logged))
		more = last != nil
		if last != nil {
			v.Log.Info("building materialized view", "view", view.QualifiedName(), "rows", logged,
				"ring_done", ringFraction(*last))
		} else {
			v.Log.Info("materialized view built on a shard", "view", view.QualifiedName())
		}
		return nil
	})
	return more, err
}

// ringFraction is how much of the ring lies at or before token t, as a
// fraction rounded to a thousandth.
func ringFraction(t int64) float64 {
	f := (float64(t) - math.MinInt64) / math.Exp2(64)
	return math.Round(f*1000) / 1000
}

// builtViewRows answers system.built_views: the views built on every
// shard.
func (v *Env) builtViewRows() []VirtualRow {
	v.views.mu.Lock()
	defer v.views.mu.Unlock()
	built := map[[2]string]bool{}
	for _, s := range v.views.status {
		key := [2]string{s.keyspace, s.view}
		if _, seen := built[key]; !seen {
			built[key] = true
		}
		built[key] = built[key] && s.done
	}
	var rows []VirtualRow
	for _, key := range slices.SortedFunc(maps.Keys(built), func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
	}) {
		if built[key] {
			rows = append(rows, VirtualRow{"keyspace_name": TextValue(key[0]), "view_name": TextValue(key[1]),
				"status_replicated": BoolValue(true)})
		}
	}
	return rows
}

// viewBuildStatusRows answers system_distributed.view_build_status: each
// shard's build of each view.
func (v *Env) viewBuildStatusRows() []VirtualRow {
	v.views.mu.Lock()
	defer v.views.mu.Unlock()
	var rows []VirtualRow
	for _, s := range v.views.status {
		status := "STARTED"
		if s.done {
			status = "SUCCESS"
		}
		rows = append(rows, VirtualRow{"keyspace_name": TextValue(s.keyspace), "view_name": TextValue(s.view),
			"host_id": uuidValue(s.host), "status": TextValue(status)})
	}
	return rows
}
