package localpg

import (
	"context"
	"os"
	"time"
)

// FastSettings make throwaway clusters fast: they give up durability. A
// test that kills a server must keep synchronous_commit on, or the last
// commits before the kill are lost; fsync off loses nothing unless the
// operating system crashes.
var FastSettings = map[string]string{"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}

// TempClusters starts n throwaway clusters under a new temporary directory,
// as test suites do in TestMain. stop stops them and removes the directory.
func TempClusters(ctx context.Context, n int, opts Options) (clusters []*Cluster, stop func(), err error) {
	root, err := os.MkdirTemp("", "cqlpg-test-")
	if err == nil {
		// PostgreSQL runs as the postgres user when tests run as root, and
		// must be able to reach its data directory.
		err = os.Chmod(root, 0o755)
	}
	if err != nil {
		return nil, nil, err
	}
	if opts.Settings == nil {
		opts.Settings = FastSettings
	}
	clusters, err = StartMany(ctx, root, n, opts)
	if err != nil {
		os.RemoveAll(root)
		return nil, nil, err
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, c := range clusters {
			c.Stop(ctx)
		}
		os.RemoveAll(root)
	}
	return clusters, stop, nil
}
