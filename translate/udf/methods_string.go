package udf

import (
	"strings"
	"unicode"
)

// java.lang.String and StringBuilder.

// csString is the text of a CharSequence argument (String or
// StringBuilder), throwing NullPointerException for null.
func csString(v val) string {
	switch r := v.r.(type) {
	case nil:
		npe()
	case string:
		return r
	case *jbuilder:
		return utf16Decode(r.u)
	}
	return ""
}

// strIndex throws StringIndexOutOfBoundsException as Java 11's String
// does for one index.
func strIndex(i int) { throw(clsStringIndex, "String index out of range: %d", i) }

// javaTrim is String.trim: it drops characters up to ' ' at both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// isJavaWhitespace is Character.isWhitespace.
func isJavaWhitespace(r rune) bool {
	return r >= 0x1c && r <= 0x1f || r >= 9 && r <= 13 || unicode.IsSpace(r) && r != 0xa0 && r != 0x2007 && r != 0x202f
}

func declareStrings() {
	c := clsString
	str := func(fr *frame, s string) val {
		fr.alloc(len(s))
		return strval(s)
	}
	def(c, "int length()", func(_ *frame, r val, _ []val) val { return ival(int32(jlen(r.str()))) })
	def(c, "boolean isEmpty()", func(_ *frame, r val, _ []val) val { return zval(r.str() == "") })
	def(c, "boolean isBlank()", func(_ *frame, r val, _ []val) val {
		return zval(strings.TrimFunc(r.str(), isJavaWhitespace) == "")
	})
	def(c, "char charAt(int)", func(_ *frame, r val, a []val) val {
		u := unitsOf(r.str())
		i := int(a[0].i())
		if i < 0 || i >= u.len() {
			strIndex(i)
		}
		return cval(u.at(i))
	})
	def(c, "int codePointAt(int)", func(_ *frame, r val, a []val) val {
		u := unitsOf(r.str())
		i := int(a[0].i())
		if i < 0 || i >= u.len() {
			strIndex(i)
		}
		c := rune(u.at(i))
		if c >= 0xd800 && c < 0xdc00 && i+1 < u.len() {
			if d := rune(u.at(i + 1)); d >= 0xdc00 && d < 0xe000 {
				c = (c-0xd800)<<10 + (d - 0xdc00) + 0x10000
			}
		}
		return ival(int32(c))
	})
	def(c, "String substring(int)", func(fr *frame, r val, a []val) val {
		u := unitsOf(r.str())
		b := int(a[0].i())
		if b < 0 {
			strIndex(b)
		}
		if u.len()-b < 0 {
			strIndex(u.len() - b)
		}
		return str(fr, u.slice(b, u.len()))
	})
	def(c, "String substring(int,int)", func(fr *frame, r val, a []val) val {
		u := unitsOf(r.str())
		b, e := int(a[0].i()), int(a[1].i())
		if b < 0 || b > e || e > u.len() {
			throw(clsStringIndex, "begin %d, end %d, length %d", b, e, u.len())
		}
		return str(fr, u.slice(b, e))
	})
	def(c, "CharSequence subSequence(int,int)", func(fr *frame, r val, a []val) val {
		u := unitsOf(r.str())
		b, e := int(a[0].i()), int(a[1].i())
		if b < 0 || b > e || e > u.len() {
			throw(clsStringIndex, "begin %d, end %d, length %d", b, e, u.len())
		}
		return str(fr, u.slice(b, e))
	})
	indexOf := func(r val, sub string, from int, last bool) val {
		u, s := unitsOf(r.str()), unitsOf(sub)
		if last {
			return ival(int32(u.lastIndex(s, from)))
		}
		return ival(int32(u.index(s, from)))
	}
	def(c, "int indexOf(String)", func(_ *frame, r val, a []val) val { return indexOf(r, csString(a[0]), 0, false) })
	def(c, "int indexOf(String,int)", func(_ *frame, r val, a []val) val {
		return indexOf(r, csString(a[0]), int(a[1].i()), false)
	})
	def(c, "int indexOf(int)", func(_ *frame, r val, a []val) val { return indexOf(r, string(rune(a[0].i())), 0, false) })
	def(c, "int indexOf(int,int)", func(_ *frame, r val, a []val) val {
		return indexOf(r, string(rune(a[0].i())), int(a[1].i()), false)
	})
	def(c, "int lastIndexOf(String)", func(_ *frame, r val, a []val) val {
		return indexOf(r, csString(a[0]), jlen(r.str()), true)
	})
	def(c, "int lastIndexOf(String,int)", func(_ *frame, r val, a []val) val {
		return indexOf(r, csString(a[0]), int(a[1].i()), true)
	})
	def(c, "int lastIndexOf(int)", func(_ *frame, r val, a []val) val {
		return indexOf(r, string(rune(a[0].i())), jlen(r.str()), true)
	})
	def(c, "boolean contains(CharSequence)", func(_ *frame, r val, a []val) val {
		return zval(strings.Contains(r.str(), csString(a[0])))
	})
	def(c, "boolean startsWith(String)", func(_ *frame, r val, a []val) val {
		return zval(strings.HasPrefix(r.str(), csString(a[0])))
	})
	def(c, "boolean startsWith(String,int)", func(_ *frame, r val, a []val) val {
		u, p := unitsOf(r.str()), unitsOf(csString(a[0]))
		from := int(a[1].i())
		return zval(from >= 0 && from <= u.len() && u.index(p, from) == from)
	})
	def(c, "boolean endsWith(String)", func(_ *frame, r val, a []val) val {
		return zval(strings.HasSuffix(r.str(), csString(a[0])))
	})
	def(c, "String toUpperCase()", func(fr *frame, r val, _ []val) val { return str(fr, strings.ToUpper(r.str())) })
	def(c, "String toLowerCase()", func(fr *frame, r val, _ []val) val { return str(fr, strings.ToLower(r.str())) })
	def(c, "String trim()", func(_ *frame, r val, _ []val) val { return strval(javaTrim(r.str())) })
	def(c, "String strip()", func(_ *frame, r val, _ []val) val { return strval(strings.TrimFunc(r.str(), isJavaWhitespace)) })
	def(c, "String stripLeading()", func(_ *frame, r val, _ []val) val {
		return strval(strings.TrimLeftFunc(r.str(), isJavaWhitespace))
	})
	def(c, "String stripTrailing()", func(_ *frame, r val, _ []val) val {
		return strval(strings.TrimRightFunc(r.str(), isJavaWhitespace))
	})
	def(c, "boolean equalsIgnoreCase(String)", func(_ *frame, r val, a []val) val {
		return zval(a[0].r != nil && jlen(r.str()) == jlen(a[0].str()) && strings.EqualFold(r.str(), a[0].str()))
	})
	def(c, "boolean contentEquals(CharSequence)", func(_ *frame, r val, a []val) val {
		return zval(r.str() == csString(a[0]))
	})
	def(c, "int compareTo(String)", func(_ *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return ival(int32(jcompare(r.str(), a[0].str())))
	})
	def(c, "int compareToIgnoreCase(String)", func(_ *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		fold := func(s string) string { return strings.ToLower(strings.ToUpper(s)) }
		return ival(int32(jcompare(fold(r.str()), fold(a[0].str()))))
	})
	def(c, "String replace(char,char)", func(fr *frame, r val, a []val) val {
		return str(fr, strings.ReplaceAll(r.str(), charString(a[0].c()), charString(a[1].c())))
	})
	def(c, "String replace(CharSequence,CharSequence)", func(fr *frame, r val, a []val) val {
		old, repl := csString(a[0]), csString(a[1])
		s := r.str()
		if old == "" {
			n := jlen(s)
			fr.alloc((n + 1) * len(repl))
		} else {
			fr.alloc(strings.Count(s, old) * len(repl))
		}
		return str(fr, strings.ReplaceAll(s, old, repl))
	})
	def(c, "String concat(String)", func(fr *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return str(fr, r.str()+a[0].str())
	})
	def(c, "String repeat(int)", func(fr *frame, r val, a []val) val {
		n := int(a[0].i())
		if n < 0 {
			throw(clsIllegalArgument, "count is negative: %d", n)
		}
		fr.alloc(n * len(r.str()))
		return strval(strings.Repeat(r.str(), n))
	})
	def(c, "String intern()", func(_ *frame, r val, _ []val) val { return strval(intern(r.str())) })
	def(c, "String toString()", func(_ *frame, r val, _ []val) val { return r })
	def(c, "char[] toCharArray()", func(fr *frame, r val, _ []val) val {
		u := utf16Units(r.str())
		fr.alloc(valSize * len(u))
		vals := make([]val, len(u))
		for i, c := range u {
			vals[i] = cval(c)
		}
		return refval(&jarray{elem: tChar, vals: vals})
	})
	def(c, "byte[] getBytes()", func(fr *frame, r val, _ []val) val {
		b := []byte(r.str())
		fr.alloc(valSize * len(b))
		vals := make([]val, len(b))
		for i, c := range b {
			vals[i] = byval(int8(c))
		}
		return refval(&jarray{elem: tByte, vals: vals})
	})
	def(c, "String[] split(String)", func(fr *frame, r val, a []val) val { return javaSplit(fr, r.str(), a[0], 0) })
	def(c, "String[] split(String,int)", func(fr *frame, r val, a []val) val {
		return javaSplit(fr, r.str(), a[0], int(a[1].i()))
	})
	def(c, "boolean matches(String)", func(_ *frame, r val, a []val) val {
		re := javaRegexp(a[0], true)
		return zval(re.MatchString(r.str()))
	})
	def(c, "String replaceAll(String,String)", func(fr *frame, r val, a []val) val {
		return str(fr, javaReplace(r.str(), a[0], a[1], -1))
	})
	def(c, "String replaceFirst(String,String)", func(fr *frame, r val, a []val) val {
		return str(fr, javaReplace(r.str(), a[0], a[1], 1))
	})

	valueOf := func(fr *frame, _ val, a []val) val { return strval(toJavaString(fr, a[0])) }
	def(c, "static String valueOf(Object)", valueOf)
	for _, p := range []string{"boolean", "char", "int", "long", "float", "double"} {
		pt := primTypes[p].prim
		def(c, "static String valueOf("+p+")", func(_ *frame, _ val, a []val) val { return strval(primString(pt, a[0])) })
	}
	def(c, "static String valueOf(char[])", func(fr *frame, _ val, a []val) val { return str(fr, charsString(a[0])) })
	def(c, "static String copyValueOf(char[])", func(fr *frame, _ val, a []val) val { return str(fr, charsString(a[0])) })
	def(c, "static String format(String,Object...)", func(fr *frame, _ val, a []val) val {
		return str(fr, javaFormat(fr, a[0], a[1]))
	})
	def(c, "static String join(CharSequence,CharSequence...)", func(fr *frame, _ val, a []val) val {
		return str(fr, joinStrings(a[0], elements(a[1])))
	})
	def(c, "static String join(CharSequence,Iterable<?>)", func(fr *frame, _ val, a []val) val {
		return str(fr, joinStrings(a[0], elements(a[1])))
	})
	ctor(c, "()", func(*frame, val, []val) val { return strval("") })
	ctor(c, "(String)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return strval(strings.Clone(a[0].str()))
	})
	ctor(c, "(char[])", func(fr *frame, _ val, a []val) val { return str(fr, charsString(a[0])) })
	ctor(c, "(StringBuilder)", func(fr *frame, _ val, a []val) val { return str(fr, csString(a[0])) })
	ctor(c, "(byte[])", func(fr *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		vals := a[0].r.(*jarray).vals
		b := make([]byte, len(vals))
		for i, v := range vals {
			b[i] = byte(v.n)
		}
		return str(fr, strings.ToValidUTF8(string(b), "\uFFFD"))
	})
	declareBuilder(clsBuilder)
	declareBuilder(clsBuffer)
	cs := clsCharSequence
	def(cs, "int length()", func(_ *frame, r val, _ []val) val { return ival(int32(jlen(csString(r)))) })
	def(cs, "char charAt(int)", func(_ *frame, r val, a []val) val {
		u := unitsOf(csString(r))
		i := int(a[0].i())
		if i < 0 || i >= u.len() {
			strIndex(i)
		}
		return cval(u.at(i))
	})
	def(cs, "CharSequence subSequence(int,int)", func(fr *frame, r val, a []val) val {
		u := unitsOf(csString(r))
		b, e := int(a[0].i()), int(a[1].i())
		if b < 0 || b > e || e > u.len() {
			throw(clsStringIndex, "begin %d, end %d, length %d", b, e, u.len())
		}
		return str(fr, u.slice(b, e))
	})
}

// charsString is the string of a char[].
func charsString(v val) string {
	if v.r == nil {
		npe()
	}
	vals := v.r.(*jarray).vals
	u := make([]uint16, len(vals))
	for i, c := range vals {
		u[i] = c.c()
	}
	return utf16Decode(u)
}

// joinStrings is String.join.
func joinStrings(sep val, elems []val) string {
	d := csString(sep)
	parts := make([]string, len(elems))
	for i, e := range elems {
		if e.r == nil {
			parts[i] = "null"
		} else {
			parts[i] = csString(e)
		}
	}
	return strings.Join(parts, d)
}

// declareBuilder declares StringBuilder or StringBuffer, which hold
// UTF-16 code units.
func declareBuilder(c *jclass) {
	self := c.name
	get := func(r val) *jbuilder { return r.r.(*jbuilder) }
	appendS := func(fr *frame, r val, s string) val {
		b := get(r)
		fr.alloc(2 * len(s))
		if isASCII(s) {
			for i := 0; i < len(s); i++ {
				b.u = append(b.u, uint16(s[i]))
			}
		} else {
			b.u = append(b.u, utf16Units(s)...)
		}
		return r
	}
	ctor(c, "()", func(*frame, val, []val) val { return refval(&jbuilder{}) })
	ctor(c, "(int)", func(_ *frame, _ val, a []val) val {
		if a[0].i() < 0 {
			throw(clsNegativeArray, "%d", a[0].i())
		}
		return refval(&jbuilder{})
	})
	ctor(c, "(String)", func(fr *frame, _ val, a []val) val {
		return appendS(fr, refval(&jbuilder{}), csString(a[0]))
	})
	ctor(c, "(CharSequence)", func(fr *frame, _ val, a []val) val {
		return appendS(fr, refval(&jbuilder{}), csString(a[0]))
	})
	def(c, self+" append(Object)", func(fr *frame, r val, a []val) val { return appendS(fr, r, toJavaString(fr, a[0])) })
	def(c, self+" append(String)", func(fr *frame, r val, a []val) val { return appendS(fr, r, toJavaString(fr, a[0])) })
	def(c, self+" append(CharSequence)", func(fr *frame, r val, a []val) val { return appendS(fr, r, toJavaString(fr, a[0])) })
	def(c, self+" append(char[])", func(fr *frame, r val, a []val) val { return appendS(fr, r, charsString(a[0])) })
	for _, p := range []string{"boolean", "char", "int", "long", "float", "double"} {
		pt := primTypes[p].prim
		def(c, self+" append("+p+")", func(fr *frame, r val, a []val) val { return appendS(fr, r, primString(pt, a[0])) })
	}
	insert := func(fr *frame, r val, at int, s string) val {
		b := get(r)
		if at < 0 || at > len(b.u) {
			throw(clsStringIndex, "offset %d, length %d", at, len(b.u))
		}
		fr.alloc(2 * len(s))
		b.u = append(b.u[:at], append(utf16Units(s), b.u[at:]...)...)
		return r
	}
	def(c, self+" insert(int,Object)", func(fr *frame, r val, a []val) val {
		return insert(fr, r, int(a[0].i()), toJavaString(fr, a[1]))
	})
	def(c, self+" insert(int,String)", func(fr *frame, r val, a []val) val {
		return insert(fr, r, int(a[0].i()), toJavaString(fr, a[1]))
	})
	for _, p := range []string{"boolean", "char", "int", "long", "float", "double"} {
		pt := primTypes[p].prim
		def(c, self+" insert(int,"+p+")", func(fr *frame, r val, a []val) val {
			return insert(fr, r, int(a[0].i()), primString(pt, a[1]))
		})
	}
	def(c, "String toString()", func(fr *frame, r val, _ []val) val {
		s := utf16Decode(get(r).u)
		fr.alloc(len(s))
		return strval(s)
	})
	def(c, "int length()", func(_ *frame, r val, _ []val) val { return ival(int32(len(get(r).u))) })
	def(c, "char charAt(int)", func(_ *frame, r val, a []val) val {
		b, i := get(r), int(a[0].i())
		if i < 0 || i >= len(b.u) {
			throw(clsStringIndex, "index %d,length %d", i, len(b.u))
		}
		return cval(b.u[i])
	})
	def(c, "void setCharAt(int,char)", func(_ *frame, r val, a []val) val {
		b, i := get(r), int(a[0].i())
		if i < 0 || i >= len(b.u) {
			throw(clsStringIndex, "index %d,length %d", i, len(b.u))
		}
		b.u[i] = a[1].c()
		return null
	})
	def(c, self+" deleteCharAt(int)", func(_ *frame, r val, a []val) val {
		b, i := get(r), int(a[0].i())
		if i < 0 || i >= len(b.u) {
			throw(clsStringIndex, "index %d,length %d", i, len(b.u))
		}
		b.u = append(b.u[:i], b.u[i+1:]...)
		return r
	})
	def(c, self+" delete(int,int)", func(_ *frame, r val, a []val) val {
		b := get(r)
		s, e := int(a[0].i()), min(int(a[1].i()), len(b.u))
		if s < 0 || s > e {
			throw(clsStringIndex, "start %d, end %d, length %d", s, int(a[1].i()), len(b.u))
		}
		b.u = append(b.u[:s], b.u[e:]...)
		return r
	})
	def(c, self+" replace(int,int,String)", func(fr *frame, r val, a []val) val {
		b := get(r)
		s, e := int(a[0].i()), min(int(a[1].i()), len(b.u))
		if s < 0 || s > len(b.u) || s > e {
			throw(clsStringIndex, "start %d, end %d, length %d", s, int(a[1].i()), len(b.u))
		}
		repl := utf16Units(csString(a[2]))
		fr.alloc(2 * len(repl))
		b.u = append(b.u[:s:s], append(repl, b.u[e:]...)...)
		return r
	})
	def(c, self+" reverse()", func(_ *frame, r val, _ []val) val {
		b := get(r)
		s := []rune(utf16Decode(b.u))
		for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
			s[i], s[j] = s[j], s[i]
		}
		b.u = utf16Units(string(s))
		return r
	})
	def(c, "void setLength(int)", func(fr *frame, r val, a []val) val {
		b, n := get(r), int(a[0].i())
		if n < 0 {
			throw(clsStringIndex, "String index out of range: %d", n)
		}
		if n <= len(b.u) {
			b.u = b.u[:n]
		} else {
			fr.alloc(2 * (n - len(b.u)))
			b.u = append(b.u, make([]uint16, n-len(b.u))...)
		}
		return null
	})
	def(c, "int indexOf(String)", func(_ *frame, r val, a []val) val {
		return ival(int32(unitsOf(utf16Decode(get(r).u)).index(unitsOf(csString(a[0])), 0)))
	})
	def(c, "int lastIndexOf(String)", func(_ *frame, r val, a []val) val {
		u := unitsOf(utf16Decode(get(r).u))
		return ival(int32(u.lastIndex(unitsOf(csString(a[0])), u.len())))
	})
	def(c, "String substring(int)", func(fr *frame, r val, a []val) val {
		b, s := get(r), int(a[0].i())
		if s < 0 || s > len(b.u) {
			throw(clsStringIndex, "start %d, end %d, length %d", s, len(b.u), len(b.u))
		}
		out := utf16Decode(b.u[s:])
		fr.alloc(len(out))
		return strval(out)
	})
	def(c, "String substring(int,int)", func(fr *frame, r val, a []val) val {
		b, s, e := get(r), int(a[0].i()), int(a[1].i())
		if s < 0 || e > len(b.u) || s > e {
			throw(clsStringIndex, "start %d, end %d, length %d", s, e, len(b.u))
		}
		out := utf16Decode(b.u[s:e])
		fr.alloc(len(out))
		return strval(out)
	})
}
