package localpg

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
)

// StartMany starts n clusters in parallel in root/shard0 … root/shard{n-1}.
// opts.Dir is ignored; a nonzero opts.Port is shard0's port and shard i gets
// opts.Port+i. On error it stops the clusters it started and returns no
// clusters.
//
// Each missing cluster gets its own initdb run: initializing one and copying
// it was measured to be no faster (about 1.9 s against 1.7 s for three
// clusters on a 2-CPU VM), because copying its ~1000 files costs about as
// much as initdb itself.
func StartMany(ctx context.Context, root string, n int, opts Options) ([]*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("localpg: StartMany needs at least one cluster, got %d", n)
	}
	bins, err := FindBinaries(opts.Bin)
	if err != nil {
		return nil, err
	}
	clusters := make([]*Cluster, n)
	for i := range clusters {
		o := opts
		o.Dir = filepath.Join(root, "shard"+strconv.Itoa(i))
		if clusters[i], err = newCluster(o, bins); err != nil {
			return nil, err
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, c := range clusters {
		port := 0
		if opts.Port != 0 {
			port = opts.Port + i
		}
		wg.Go(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if errs[i] = c.prepare(ctx); errs[i] == nil {
				errs[i] = c.start(ctx, port)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		for i, c := range clusters {
			if errs[i] == nil {
				c.Stop(stopCtx)
			}
		}
		return nil, err
	}
	return clusters, nil
}
