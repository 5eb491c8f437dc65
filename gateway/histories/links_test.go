package histories

import (
	"context"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// TestLinksArePerGateway: each gateway reaches each shard through its own
// proxy, so that a partition can cut one gateway from a shard while the
// other still reaches it. Writes at ALL through the gateway cut fail, and
// through the other succeed; once healed, the first succeeds again.
func TestLinksArePerGateway(t *testing.T) {
	ctx := t.Context()
	var sess [2]*gocql.Session
	for g := range sess {
		s, err := session(cl.gws[g].port, "hist", false)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.SetConsistency(gocql.All)
		sess[g] = s
	}
	if err := sess[0].Query("CREATE TABLE IF NOT EXISTS links (k int PRIMARY KEY, v int)").Exec(); err != nil {
		t.Fatal(err)
	}
	write := func(g int) error {
		return sess[g].Query("INSERT INTO links (k, v) VALUES (1, ?)", g).WithContext(ctx).Exec()
	}
	cut := cl.gws[0].links[0]
	if err := toxic(cut, "cut", "timeout", "", map[string]any{"timeout": 0}); err != nil {
		t.Fatal(err)
	}
	healed := false
	defer func() {
		if !healed {
			heal(cut, true)
		}
	}()
	if err := write(0); err == nil {
		t.Error("a write at ALL through the gateway cut from a shard succeeded")
	} else {
		t.Logf("through the gateway cut: %v", err)
	}
	if err := write(1); err != nil {
		t.Errorf("a write at ALL through the gateway that reaches every shard: %v", err)
	}
	if err := heal(cut, true); err != nil {
		t.Fatal(err)
	}
	healed = true
	retryCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := retry(retryCtx, func() error { return write(0) }); err != nil {
		t.Errorf("healed, the gateway cut still cannot write at ALL: %v", err)
	}
}
