package udf

import (
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// The udfContext Cassandra gives bodies, which makes new tuple and user
// type values, and the driver's LocalDate and Duration.

// newTuple makes an empty value of a tuple or user type.
func newTuple(t *pgschema.Type) val {
	return refval(&jtuple{t: t, vals: make([][]byte, len(t.Elem))})
}

// kindName is a CQL type's name as the driver's DataType.Name prints it.
func kindName(t *pgschema.Type) string {
	s := t.String()
	s = strings.TrimPrefix(s, "frozen<")
	if i := strings.IndexByte(s, '<'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ">")
}

func declareContext() {
	c := clsUDFContext
	argType := func(fr *frame, at val, byName bool) *pgschema.Type {
		f := fr.fn
		if byName {
			if at.r == nil {
				throw(clsIllegalArgument, "Function does not declare an argument named 'null'")
			}
			i, found := f.byName[at.str()]
			if !found {
				throw(clsIllegalArgument, "Function does not declare an argument named '%s'", at.str())
			}
			return f.params[i].Type
		}
		i := int(at.i())
		if i < 0 || i >= len(f.params) {
			throw(clsIllegalArgument, "Function does not declare an argument with index %d", i)
		}
		return f.params[i].Type
	}
	udt := func(t *pgschema.Type) val {
		if t.Kind != pgschema.UDT {
			throw(clsIllegalState, "Function argument is not a UDT but a %s", kindName(t))
		}
		return newTuple(t)
	}
	tuple := func(t *pgschema.Type) val {
		if t.Kind != pgschema.Tuple {
			throw(clsIllegalState, "Function argument is not a tuple type but a %s", kindName(t))
		}
		return newTuple(t)
	}
	for _, key := range []string{"String", "int"} {
		byName := key == "String"
		def(c, "UDTValue newArgUDTValue("+key+")", func(fr *frame, _ val, a []val) val { return udt(argType(fr, a[0], byName)) })
		def(c, "TupleValue newArgTupleValue("+key+")", func(fr *frame, _ val, a []val) val {
			return tuple(argType(fr, a[0], byName))
		})
	}
	def(c, "UDTValue newReturnUDTValue()", func(fr *frame, _ val, _ []val) val { return udt(fr.fn.ret) })
	def(c, "TupleValue newReturnTupleValue()", func(fr *frame, _ val, _ []val) val { return tuple(fr.fn.ret) })
	def(c, "UDTValue newUDTValue(String)", func(fr *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		if t := fr.fn.userType(a[0].str()); t != nil {
			return newTuple(t)
		}
		throw(clsIllegalArgument, "No UDT named %s in keyspace %s", a[0].str(), fr.fn.keyspace())
		return null
	})
	def(c, "TupleValue newTupleValue(String)", func(fr *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		t, err := pgschema.ParseType(a[0].str(), func(name string) (*pgschema.Type, error) {
			if t := fr.fn.userType(name); t != nil {
				return t, nil
			}
			throw(clsInvalidRequest, "Unknown type %s.%s", fr.fn.keyspace(), name)
			return nil, nil
		})
		if err != nil {
			throw(clsSyntax, "%s", err.Error())
		}
		return tuple(t)
	})
}

// userType finds a user type among the function's argument and result
// types, the ones the interpreter knows, by name.
func (f *Func) userType(name string) *pgschema.Type {
	var found *pgschema.Type
	look := func(t *pgschema.Type) {
		t.Has(func(e *pgschema.Type) bool {
			if e.Kind == pgschema.UDT && e.Name == name && found == nil {
				found = e
			}
			return false
		})
	}
	for _, p := range f.params {
		look(p.Type)
	}
	look(f.ret)
	return found
}

// keyspace is the function's keyspace, as far as its types tell.
func (f *Func) keyspace() string {
	ks := ""
	look := func(t *pgschema.Type) {
		t.Has(func(e *pgschema.Type) bool {
			if e.Kind == pgschema.UDT && ks == "" {
				ks = e.Keyspace
			}
			return false
		})
	}
	for _, p := range f.params {
		look(p.Type)
	}
	look(f.ret)
	return ks
}

func declareLocalDate() {
	c := clsLocalDate
	days := func(r val) int64 { return int64(r.r.(jlocalDate)) }
	def(c, "int getDaysSinceEpoch()", func(_ *frame, r val, _ []val) val { return ival(int32(days(r))) })
	def(c, "long getMillisSinceEpoch()", func(_ *frame, r val, _ []val) val { return jval(days(r) * 86400000) })
	part := func(name string, pick func(y int64, m, d int) int64) {
		def(c, "int "+name+"()", func(_ *frame, r val, _ []val) val {
			cal := pgschema.JavaCalendarAt(days(r) * 86400000)
			return ival(int32(pick(cal.Year, cal.Month, cal.Day)))
		})
	}
	part("getYear", func(y int64, _, _ int) int64 { return y })
	part("getMonth", func(_ int64, m, _ int) int64 { return int64(m) })
	part("getDay", func(_ int64, _, d int) int64 { return int64(d) })
	def(c, "static LocalDate fromDaysSinceEpoch(int)", func(_ *frame, _ val, a []val) val {
		return refval(jlocalDate(a[0].i()))
	})
	def(c, "static LocalDate fromMillisSinceEpoch(long)", func(_ *frame, _ val, a []val) val {
		ms := a[0].j()
		d := ms / 86400000
		if ms%86400000 < 0 {
			d--
		}
		if d != int64(int32(d)) {
			throw(clsIllegalArgument, "Millis out of bounds for a LocalDate")
		}
		return refval(jlocalDate(int32(d)))
	})
	def(c, "static LocalDate fromYearMonthDay(int,int,int)", func(_ *frame, _ val, a []val) val {
		y, m, d := int64(a[0].i()), int(a[1].i()), int(a[2].i())
		if m < 1 || m > 12 || d < 1 || d > 31 {
			throw(clsIllegalArgument, "Invalid date %d-%d-%d", y, m, d)
		}
		cal := pgschema.JavaCalendar{Year: y, Month: m, Day: d}
		return refval(jlocalDate(int32(cal.Millis() / 86400000)))
	})
}

func declareDuration() {
	c := clsDuration
	get := func(r val) pgschema.DurationValue { return r.r.(pgschema.DurationValue) }
	def(c, "int getMonths()", func(_ *frame, r val, _ []val) val { return ival(int32(get(r).Months)) })
	def(c, "int getDays()", func(_ *frame, r val, _ []val) val { return ival(int32(get(r).Days)) })
	def(c, "long getNanoseconds()", func(_ *frame, r val, _ []val) val { return jval(get(r).Nanos) })
	def(c, "static Duration newInstance(int,int,long)", func(_ *frame, _ val, a []val) val {
		m, d, n := int64(a[0].i()), int64(a[1].i()), a[2].j()
		if (m < 0 || d < 0 || n < 0) && (m > 0 || d > 0 || n > 0) {
			throw(clsIllegalArgument, "All values must be either negative or positive, got %d months, %d days, %d nanoseconds", m, d, n)
		}
		return refval(pgschema.DurationValue{Months: m, Days: d, Nanos: n})
	})
	def(c, "static Duration from(String)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		b, err := pgschema.FromString(pgschema.Scalar(pgschema.Duration), a[0].str())
		if err != nil || len(b) == 0 {
			throw(clsIllegalArgument, "Unable to convert '%s' to a duration", a[0].str())
		}
		d, _ := pgschema.DecodeDuration(b)
		return refval(d)
	})
}
