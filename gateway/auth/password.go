package auth

import (
	"fmt"

	"golang.org/x/crypto/bcrypt"
)

// Passwords are hashed and checked here, in the gateway, with bcrypt in
// Cassandra's $2a$ form: only hashes reach the shards, so that no shard
// log (log_statement = 'all', or statements logged with their parameters)
// ever holds a password. Hashes already stored, by an older gateway or
// copied from Cassandra, are checked alike.

// DefaultPasswordCost is bcrypt's cost, log2 of its rounds, as Cassandra's
// auth_bcrypt_gensalt_log2_rounds defaults it: about 60 ms a hash on one
// core of a small machine.
const DefaultPasswordCost = 10

// MinPasswordCost and MaxPasswordCost bound the cost as Cassandra does.
const (
	MinPasswordCost = 4
	MaxPasswordCost = 30
)

// bcryptKeyLength is as much of a password as bcrypt reads; Cassandra's
// bcrypt ignores the rest, and so does cqlpg.
const bcryptKeyLength = 72

func passwordKey(password string) []byte {
	b := []byte(password)
	return b[:min(len(b), bcryptKeyLength)]
}

// HashPassword returns a bcrypt hash of password with a new salt.
func HashPassword(password string, cost int) (string, error) {
	if cost < MinPasswordCost || cost > MaxPasswordCost {
		return "", fmt.Errorf("password cost %d is outside %d..%d", cost, MinPasswordCost, MaxPasswordCost)
	}
	h, err := bcrypt.GenerateFromPassword(passwordKey(password), cost)
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// PasswordMatches checks a password against a stored hash; a malformed
// hash matches nothing, as in Cassandra.
func PasswordMatches(hash, password string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), passwordKey(password)) == nil
}
