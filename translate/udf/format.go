package udf

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// String.format: java.util.Formatter's conversions for strings, booleans,
// characters, integers and floating point numbers, with its flags, width
// and precision. Floating point numbers round half up from the digits
// Double.toString prints, as Java's Formatter does (0.125 is "0.13").

// fmtSpec is one format specifier.
type fmtSpec struct {
	text      string
	flags     string
	width     int
	precision int // -1 when not given
	conv      byte
}

func (s fmtSpec) has(f byte) bool { return strings.IndexByte(s.flags, f) >= 0 }

// javaFormat formats args (an Object[]) by format.
func javaFormat(fr *frame, format, args val) string {
	if format.r == nil {
		npe()
	}
	f := format.str()
	var argv []val
	nullArgs := args.r == nil // every argument is null, as Formatter reads a null array
	if !nullArgs {
		argv = args.r.(*jarray).vals
	}
	var b strings.Builder
	next, last := 0, -1
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		spec, end := parseSpec(f, i)
		i = end
		switch spec.conv {
		case 'n':
			b.WriteByte('\n')
			continue
		case '%':
			b.WriteString(pad(spec.fmtSpec, "%"))
			continue
		}
		var arg val
		switch {
		case nullArgs:
		case spec.has('<'):
			if last < 0 {
				throw(clsMissingFormatArg, "Format specifier '%s'", spec.text)
			}
			arg = argv[last]
		case spec.index > 0:
			if spec.index > len(argv) {
				throw(clsMissingFormatArg, "Format specifier '%s'", spec.text)
			}
			last = spec.index - 1
			arg = argv[last]
		default:
			if next >= len(argv) {
				throw(clsMissingFormatArg, "Format specifier '%s'", spec.text)
			}
			last = next
			arg = argv[next]
			next++
		}
		b.WriteString(formatOne(fr, spec.fmtSpec, arg))
		if b.Len() > 1<<20 {
			fr.alloc(b.Len())
		}
	}
	return b.String()
}

// indexedSpec is a specifier with its explicit argument index.
type indexedSpec struct {
	fmtSpec
	index int
}

// parseSpec reads the specifier at f[i] ('%'), returning it and the index
// of its last character.
func parseSpec(f string, i int) (indexedSpec, int) {
	start := i
	i++
	s := indexedSpec{fmtSpec: fmtSpec{precision: -1}}
	digits := func() int {
		n := 0
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			n = min(n*10+int(f[i]-'0'), 1<<20)
			i++
		}
		return n
	}
	// An argument index is digits followed by $.
	j := i
	for j < len(f) && f[j] >= '0' && f[j] <= '9' {
		j++
	}
	if j > i && j < len(f) && f[j] == '$' {
		s.index = digits()
		i++
	}
	for i < len(f) && strings.IndexByte("-#+ 0,(<", f[i]) >= 0 {
		s.flags += string(f[i])
		i++
	}
	s.width = digits()
	if i < len(f) && f[i] == '.' {
		i++
		if i >= len(f) || f[i] < '0' || f[i] > '9' {
			throw(clsUnknownFormatConv, "Conversion = '.'")
		}
		s.precision = digits()
	}
	if i >= len(f) {
		throw(clsUnknownFormatConv, "Conversion = '%%'")
	}
	s.conv = f[i]
	s.text = f[start : i+1]
	if strings.IndexByte("bBhHsScCdoxXeEfgGn%", s.conv) < 0 {
		throw(clsUnknownFormatConv, "Conversion = '%c'", s.conv)
	}
	if s.has('-') && s.width == 0 {
		throw(clsMissingFormatWidth, "%s", s.text)
	}
	return s, i
}

// pad pads a converted value to the specifier's width.
func pad(s fmtSpec, v string) string {
	n := jlen(v)
	if n >= s.width {
		return v
	}
	fill := strings.Repeat(" ", s.width-n)
	if s.has('-') {
		return v + fill
	}
	return fill + v
}

// upper applies an upper-case conversion (S, X, E, G...).
func upper(s fmtSpec, v string) string {
	if s.conv >= 'A' && s.conv <= 'Z' {
		return strings.ToUpper(v)
	}
	return v
}

// formatOne converts one argument.
func formatOne(fr *frame, s fmtSpec, arg val) string {
	switch s.conv | 0x20 {
	case 'b':
		v := "true"
		if arg.r == nil || classOf(arg) == clsBoolean && !arg.z() {
			v = "false"
		}
		return pad(s, upper(s, truncate(v, s.precision)))
	case 'h':
		v := "null"
		if arg.r != nil {
			v = strconv.FormatUint(uint64(uint32(javaHash(arg))), 16)
		}
		return pad(s, upper(s, truncate(v, s.precision)))
	case 's':
		return pad(s, upper(s, truncate(toJavaString(fr, arg), s.precision)))
	case 'c':
		if arg.r == nil {
			return pad(s, upper(s, "null"))
		}
		switch classOf(arg) {
		case clsCharacter, clsByte, clsShort, clsInteger:
			return pad(s, upper(s, string(rune(int32(arg.n)))))
		}
	case 'd', 'o', 'x':
		if s.precision >= 0 {
			throw(clsIllegalFormatPrec, "%d", s.precision)
		}
		if arg.r == nil {
			return pad(s, "null")
		}
		if n, bits, ok := integerArg(arg); ok {
			return pad(s, upper(s, formatInteger(s, n, bits)))
		}
	case 'e', 'f', 'g':
		if arg.r == nil {
			return pad(s, "null")
		}
		switch classOf(arg) {
		case clsDouble, clsFloat:
			return pad(s, upper(s, formatFloat(fr, s, arg.d())))
		case clsBigDecimal:
			return pad(s, upper(s, formatDecimal(fr, s, decOf(arg))))
		}
	}
	throw(clsIllegalFormatConv, "%c != %s", s.conv, classOf(arg).full)
	return ""
}

func truncate(v string, precision int) string {
	if precision >= 0 {
		u := unitsOf(v)
		if precision < u.len() {
			return u.slice(0, precision)
		}
	}
	return v
}

// integerArg reads an integral argument with its width in bits (0 for
// BigInteger).
func integerArg(arg val) (*big.Int, int, bool) {
	switch classOf(arg) {
	case clsInteger:
		return big.NewInt(arg.j()), 32, true
	case clsLong:
		return big.NewInt(arg.j()), 64, true
	case clsShort:
		return big.NewInt(arg.j()), 16, true
	case clsByte:
		return big.NewInt(arg.j()), 8, true
	case clsBigInteger:
		return bigOf(arg), 0, true
	}
	return nil, 0, false
}

// formatInteger is %d, %o and %x.
func formatInteger(s fmtSpec, n *big.Int, bits int) string {
	neg := n.Sign() < 0
	var digits, prefix string
	switch s.conv | 0x20 {
	case 'd':
		digits = new(big.Int).Abs(n).String()
		if s.has(',') {
			digits = group(digits)
		}
		return signed(s, neg, "", digits)
	case 'o':
		prefix = "0"
		digits = unsignedDigits(n, bits, 8)
	default:
		prefix = "0x"
		digits = unsignedDigits(n, bits, 16)
	}
	if !s.has('#') {
		prefix = ""
	}
	if bits == 0 {
		return signed(s, neg, prefix, digits)
	}
	return zeroPad(s, prefix, digits)
}

// unsignedDigits prints n in base, as two's complement of bits for a
// negative fixed-width value and with a sign for BigInteger.
func unsignedDigits(n *big.Int, bits, base int) string {
	if bits > 0 && n.Sign() < 0 {
		u := new(big.Int).Add(n, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
		return u.Text(base)
	}
	return new(big.Int).Abs(n).Text(base)
}

// signed applies the sign flags and zero padding to digits.
func signed(s fmtSpec, neg bool, prefix, digits string) string {
	sign := ""
	switch {
	case neg && s.has('('):
		return zeroPad(s, "("+prefix, digits) + ")"
	case neg:
		sign = "-"
	case s.has('+'):
		sign = "+"
	case s.has(' '):
		sign = " "
	}
	return zeroPad(s, sign+prefix, digits)
}

// zeroPad pads with zeros between the sign and the digits when asked.
func zeroPad(s fmtSpec, head, digits string) string {
	if s.has('0') && len(head)+len(digits) < s.width {
		return head + strings.Repeat("0", s.width-len(head)-len(digits)) + digits
	}
	return head + digits
}

// group inserts thousands separators in the digits before any point.
func group(digits string) string {
	intPart, frac, dot := strings.Cut(digits, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if dot {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// formatFloat is %e, %f and %g of a double (a float's value widened).
func formatFloat(fr *frame, s fmtSpec, f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 0):
		return signed(fmtSpec{flags: strings.ReplaceAll(s.flags, "0", "")}, f < 0, "", "Infinity")
	}
	d, _ := pgschema.BigDecimalOfFloat(math.Abs(f), 64)
	return numberText(fr, s, math.Signbit(f), d)
}

// formatDecimal is %e, %f and %g of a BigDecimal.
func formatDecimal(fr *frame, s fmtSpec, d pgschema.BigDecimal) string {
	abs := pgschema.BigDecimal{Unscaled: new(big.Int).Abs(d.Unscaled), Scale: d.Scale}
	return numberText(fr, s, d.Unscaled.Sign() < 0, abs)
}

// numberText formats a non-negative decimal with the sign neg, charging
// the call for the digits it writes.
func numberText(fr *frame, s fmtSpec, neg bool, d pgschema.BigDecimal) string {
	prec := s.precision
	if prec < 0 {
		prec = 6
	}
	bigGrowth(fr, int64(prec)+max(int64(d.Precision())-int64(d.Scale), 0)+max(-int64(d.Scale), 0))
	conv := s.conv | 0x20
	if conv == 'g' {
		if prec == 0 {
			prec = 1
		}
		r := roundSignificant(d, prec)
		if r.Unscaled.Sign() != 0 && (decCompare(r, decPow10(-4)) < 0 || decCompare(r, decPow10(prec)) >= 0) {
			conv, prec = 'e', prec-1
		} else {
			conv, prec = 'f', max(prec-(adjustedExp(r)+1), 0)
			if r.Unscaled.Sign() == 0 {
				prec = s.precision
				if prec < 0 {
					prec = 6
				}
				prec = max(prec-1, 0)
			}
		}
	}
	var digits string
	if conv == 'f' {
		digits = d.RoundHalfUp(int32(prec)).PlainString()
		if s.has(',') {
			digits = group(digits)
		}
	} else {
		r := roundSignificant(d, prec+1)
		exp := adjustedExp(r)
		if r.Unscaled.Sign() == 0 {
			exp = 0
		}
		m := new(big.Int).Abs(r.Unscaled).String()
		m += strings.Repeat("0", max(prec+1-len(m), 0))
		m = m[:prec+1]
		digits = m[:1]
		if prec > 0 || s.has('#') {
			digits += "." + m[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		e := strconv.Itoa(exp)
		if len(e) < 2 {
			e = "0" + e
		}
		digits += "e" + sign + e
	}
	return signed(s, neg, "", digits)
}

// adjustedExp is the exponent of a decimal's first significant digit.
func adjustedExp(d pgschema.BigDecimal) int {
	return len(new(big.Int).Abs(d.Unscaled).String()) - 1 - int(d.Scale)
}

// roundSignificant rounds d half up to n significant digits.
func roundSignificant(d pgschema.BigDecimal, n int) pgschema.BigDecimal {
	if d.Unscaled.Sign() == 0 {
		return d
	}
	digits := len(new(big.Int).Abs(d.Unscaled).String())
	if digits <= n {
		return d
	}
	return d.RoundHalfUp(d.Scale - int32(digits-n))
}

// decPow10 is 10^n as a decimal.
func decPow10(n int) pgschema.BigDecimal {
	if n >= 0 {
		return pgschema.BigDecimal{Unscaled: new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)}
	}
	return pgschema.BigDecimal{Unscaled: big.NewInt(1), Scale: int32(-n)}
}
