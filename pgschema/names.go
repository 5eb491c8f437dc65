package pgschema

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/cqlpg/cqlpg/migrations"
)

// reserved holds CQL's reserved keywords (Cassandra 4.1), which must be
// double-quoted to be used as identifiers.
var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`add allow alter and apply asc authorize batch begin by
		columnfamily create delete desc describe drop entries execute from full grant if in
		index infinity insert into is keyspace limit materialized modify nan norecursive not
		null of on or order primary rename revoke schema select set table to token truncate
		unlogged update use using view where with`) {
		m[w] = true
	}
	return m
}()

// IsReserved reports whether the lower-case word w is a reserved CQL keyword.
func IsReserved(w string) bool { return reserved[w] }

// QuoteIdentifier returns a CQL identifier as Cassandra prints it: bare when
// it is lower case, starts with a letter, holds only letters, digits and
// underscores and is not reserved; double-quoted otherwise.
func QuoteIdentifier(s string) string {
	if isPlainIdentifier(s) && !reserved[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func isPlainIdentifier(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// maxPGName is the longest Postgres identifier in bytes (NAMEDATALEN - 1).
const maxPGName = 63

// Bookkeeping suffixes of the companion columns: the write time and expiry
// of each regular or static column, the empty-value flag of some of them,
// the order key of some key columns, the exact value of dates and decimals
// (exact.go). The longest decides how long a column's own name may be.
const (
	suffixWritetime = "$wt"
	suffixExpiry    = "$exp"
	suffixOrder     = "$ord"
	suffixEmpty     = "$empty"
	suffixExact     = "$exact"
)

// suffixDropped marks the Postgres columns DropColumns sets aside. It
// follows a whole Postgres column name, suffix included, which droppedName
// shortens when the two do not fit together.
const suffixDropped = "$dropped"

// PGColumnName turns a CQL column name into a Postgres identifier. Names
// that fit, and could not be mistaken for a bookkeeping column, are kept as
// they are, so psql shows the CQL names; others are cut, stripped of '$'
// and tagged with a digest of the full name, which keeps them distinct.
func PGColumnName(cql string) string {
	limit := maxPGName - len(suffixEmpty)
	if len(cql) <= limit && !strings.ContainsRune(cql, '$') && !systemColumns[cql] {
		return cql
	}
	return strings.ReplaceAll(digestName(cql, limit), "$", "_")
}

// digestName returns name cut, at a character boundary, to fit in limit
// bytes with the tag it ends with: '~' and a digest of the full name,
// which keeps cut names distinct.
func digestName(name string, limit int) string {
	sum := sha256.Sum256([]byte(name))
	tag := "~" + hex.EncodeToString(sum[:4])
	cut := min(len(name), limit-len(tag))
	for cut > 0 && cut < len(name) && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + tag
}

// droppedName is where DropColumns sets aside the Postgres column name.
func droppedName(name string) string {
	if len(name)+len(suffixDropped) <= maxPGName {
		return name + suffixDropped
	}
	return digestName(name, maxPGName-len(suffixDropped)) + suffixDropped
}

// PGSchemaName returns the Postgres schema that holds a keyspace's tables:
// the keyspace's own name, unless Postgres reserves it or cqlpg uses it.
func PGSchemaName(keyspace string) string {
	if strings.HasPrefix(keyspace, "pg_") || keyspace == "public" || keyspace == "information_schema" ||
		keyspace == CatalogSchema {
		return "ks_" + keyspace
	}
	return keyspace
}

// CatalogSchema is the Postgres schema holding cqlpg's catalog.
const CatalogSchema = migrations.Schema
