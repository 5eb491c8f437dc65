package localpg

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// fallbackRoot holds managed clusters whose data directory PostgreSQL's OS
// user cannot reach.
const fallbackRoot = "/var/lib/cqlpg"

// Root returns the directory under which the managed clusters of dataDir
// live: dataDir itself when PostgreSQL's OS user can reach it, else (as
// when cqlpg runs as root from a directory under /root) a directory under
// /var/lib/cqlpg named after dataDir, so that restarts find it again. moved
// reports the second case.
func Root(dataDir string) (root string, moved bool, err error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", false, err
	}
	u, err := serverUser()
	if err != nil {
		return "", false, err
	}
	if err := mkdirAll(abs); err != nil {
		return "", false, err
	}
	if u.checkTraversable(filepath.Join(abs, "shard0")) == nil {
		return abs, false, nil
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(fallbackRoot, filepath.Base(abs)+"-"+hex.EncodeToString(sum[:4])), true, nil
}
