package auth

import (
	"strings"
	"testing"
)

func TestPasswords(t *testing.T) {
	h, err := HashPassword("s3cret", MinPasswordCost)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$2a$04$") || len(h) != 60 {
		t.Errorf("hash %q, want Cassandra's $2a$ form with the cost", h)
	}
	if !PasswordMatches(h, "s3cret") || PasswordMatches(h, "s3cret ") || PasswordMatches(h, "") {
		t.Error("a hash matches other passwords than its own")
	}
	// The same hash under the other names of bcrypt's version, as other
	// libraries write it, matches too. (A hash made by the shards'
	// pgcrypto is checked by TestAuthPasswordsOffShards.)
	for _, v := range []string{"$2b$", "$2y$"} {
		if !PasswordMatches(v+h[4:], "s3cret") {
			t.Errorf("%s hash does not match", v)
		}
	}
	for _, bad := range []string{"", "s3cret", "$2a$04$short", "$9z$" + h[4:]} {
		if PasswordMatches(bad, "s3cret") {
			t.Errorf("malformed hash %q matches", bad)
		}
	}
	// bcrypt reads 72 bytes: longer passwords hash, and match by those.
	long := strings.Repeat("p", 100)
	if h, err = HashPassword(long, MinPasswordCost); err != nil || !PasswordMatches(h, long) || !PasswordMatches(h, long[:72]+"x") {
		t.Errorf("a 100-byte password: %q, %v", h, err)
	}
	// One of bcrypt's published test vectors: U*U at cost 5.
	if !PasswordMatches("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*U") {
		t.Error("bcrypt's test vector U*U does not match")
	}
	if _, err := HashPassword("x", 3); err == nil {
		t.Error("cost 3 accepted")
	}
}
