package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/bulk"
)

// TestLoadEmptyKeyComponent loads a row whose composite partition key has
// an empty component, which an INSERT accepts, and refuses an empty key
// of one column, as an INSERT does.
func TestLoadEmptyKeyComponent(t *testing.T) {
	e := sharedBulkEnv(t)
	e.exec(t, "CREATE KEYSPACE IF NOT EXISTS bl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE bl.compkey (a text, b text, v int, PRIMARY KEY ((a, b)))",
		"CREATE TABLE bl.onekey (a text PRIMARY KEY, v int)")
	c := e.reopen(t)
	dir := t.TempDir()
	one := filepath.Join(dir, "onekey.csv")
	if err := os.WriteFile(one, []byte("a,v\n\"\",1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := c.Load(context.Background(), "bl", "onekey", one, bulk.LoadOptions{})
	if want := "line 2, column a: Key may not be empty"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("empty key of one column: %v, want %q", err, want)
	}
	file := filepath.Join(dir, "compkey.csv")
	if err := os.WriteFile(file, []byte("a,b,v\n\"\",x,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(context.Background(), "bl", "compkey", file, bulk.LoadOptions{}); err != nil {
		t.Fatalf("load: %v", err)
	}
	var v int
	if err := e.sess.Query("SELECT v FROM bl.compkey WHERE a = '' AND b = 'x'").Scan(&v); err != nil || v != 1 {
		t.Errorf("the loaded row: v = %d, %v", v, err)
	}
}
