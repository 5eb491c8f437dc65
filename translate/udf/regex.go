package udf

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Regular expressions for String.split, matches, replaceAll and
// replaceFirst. Java's syntax and Go's agree on what bodies use (classes,
// quantifiers, groups, alternation); a pattern Go cannot compile, such as
// one with a back reference or a lookaround, fails the call.

var regexps sync.Map // pattern → *regexp.Regexp

// javaRegexp compiles a pattern, anchored at both ends for matches.
func javaRegexp(p val, whole bool) *regexp.Regexp {
	if p.r == nil {
		npe()
	}
	pat := p.str()
	key := pat
	if whole {
		key = "\x00" + pat
		pat = `^(?:` + pat + `)$`
	}
	if re, ok := regexps.Load(key); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		throw(clsUnsupported, "the regular expression %s is not supported by cqlpg user functions", p.str())
	}
	regexps.Store(key, re)
	return re
}

// javaSplit is String.split(regex, limit), with Java's rules: no leading
// empty string for a zero-width match at the start, at most limit parts
// when limit is positive, trailing empty strings dropped when it is zero.
func javaSplit(fr *frame, s string, pat val, limit int) val {
	re := javaRegexp(pat, false)
	var parts []string
	index := 0
	for _, m := range re.FindAllStringIndex(s, -1) {
		if limit > 0 && len(parts) >= limit-1 {
			break
		}
		if index == 0 && m[0] == 0 && m[1] == 0 {
			continue
		}
		parts = append(parts, s[index:m[0]])
		index = m[1]
	}
	if index == 0 && len(parts) == 0 {
		parts = []string{s}
	} else {
		parts = append(parts, s[index:])
	}
	if limit == 0 {
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
	}
	fr.alloc(len(s) + 16*len(parts))
	vals := make([]val, len(parts))
	for i, p := range parts {
		vals[i] = strval(p)
	}
	return refval(&jarray{elem: typeString, vals: vals})
}

// javaReplace is replaceAll (n < 0) and replaceFirst (n == 1).
func javaReplace(s string, pat, repl val, n int) string {
	re := javaRegexp(pat, false)
	if repl.r == nil {
		npe()
	}
	tmpl := goTemplate(repl.str(), re.NumSubexp())
	if n < 0 {
		return re.ReplaceAllString(s, tmpl)
	}
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		return s
	}
	out := re.ExpandString(nil, tmpl, s, loc)
	return s[:loc[0]] + string(out) + s[loc[1]:]
}

// goTemplate rewrites a Java replacement ($1, ${name}, \$) as a Go
// template (${1}, ${name}, $$).
func goTemplate(r string, groups int) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch c {
		case '\\':
			i++
			if i >= len(r) {
				throw(clsIllegalArgument, "character to be escaped is missing")
			}
			if r[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(r[i])
			}
		case '$':
			i++
			if i >= len(r) {
				throw(clsIllegalArgument, "Illegal group reference: group index is missing")
			}
			if r[i] == '{' {
				end := strings.IndexByte(r[i:], '}')
				if end < 0 {
					throw(clsIllegalArgument, "named capturing group is missing trailing '}'")
				}
				b.WriteString(r[i-1 : i+end+1])
				i += end
				continue
			}
			if r[i] < '0' || r[i] > '9' {
				throw(clsIllegalArgument, "Illegal group reference")
			}
			n := int(r[i] - '0')
			for i+1 < len(r) && r[i+1] >= '0' && r[i+1] <= '9' && n*10+int(r[i+1]-'0') <= groups {
				i++
				n = n*10 + int(r[i]-'0')
			}
			if n > groups {
				throw(clsIndexOutOfBounds, "No group %d", n)
			}
			b.WriteString("${" + strconv.Itoa(n) + "}")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
