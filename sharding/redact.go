package sharding

import "regexp"

// Secrets in shards' connection strings, in URLs and in CQL text (CREATE
// ROLE ... PASSWORD 'x') are masked wherever they would be shown: logs,
// errors, the web view.

// masked replaces a secret.
const masked = "*****"

var (
	// passwordInURL is the password of a URL's user information.
	passwordInURL = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s/]*@`)
	// quotedPassword is a password as a string literal, in CQL (PASSWORD
	// 'x', PASSWORD = 'x', HASHED PASSWORD '...', 'password': 'x' in an
	// option map, $$x$$ strings) or in a connection string.
	quotedPassword = regexp.MustCompile(`(?i)(\bpassword'?\s*[=:]?\s*)('(?:[^']|'')*'|\$\$[\s\S]*?\$\$)`)
	// barePassword is password=x in a connection string.
	barePassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)([^\s'$]\S*)`)
)

// Redact masks the passwords in s.
func Redact(s string) string {
	s = passwordInURL.ReplaceAllString(s, "${1}"+masked+"@")
	s = quotedPassword.ReplaceAllString(s, "${1}'"+masked+"'")
	return barePassword.ReplaceAllString(s, "${1}"+masked)
}
