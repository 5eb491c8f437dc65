package udf

import (
	"math/rand/v2"
	"slices"
	"sort"
)

// The static helpers of java.util: Collections, Arrays and Objects.

func declareCollectionsClass() {
	c := clsCollections
	sortList := func(l *jlist) {
		if l.fixed == immutable {
			throwBare(clsUnsupported)
		}
		if len(l.elems) == 1 {
			javaCompare(l.elems[0], l.elems[0])
		}
		sort.SliceStable(l.elems, func(i, j int) bool { return javaCompare(l.elems[i], l.elems[j]) < 0 })
		l.mod++
	}
	def(c, "static <T> void sort(List<T>)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		sortList(a[0].r.(*jlist))
		return null
	})
	def(c, "static void reverse(List<?>)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		l := a[0].r.(*jlist)
		if l.fixed == immutable {
			throwBare(clsUnsupported)
		}
		slices.Reverse(l.elems)
		return null
	})
	def(c, "static void shuffle(List<?>)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		l := a[0].r.(*jlist)
		rand.Shuffle(len(l.elems), func(i, j int) { l.elems[i], l.elems[j] = l.elems[j], l.elems[i] })
		return null
	})
	def(c, "static void swap(List<?>,int,int)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		l := a[0].r.(*jlist)
		i, j := listIndex(l, a[1].i(), len(l.elems)), listIndex(l, a[2].i(), len(l.elems))
		l.elems[i], l.elems[j] = l.elems[j], l.elems[i]
		return null
	})
	extreme := func(a []val, sign int) val {
		es := elements(a[0])
		if len(es) == 0 {
			throwBare(clsNoSuchElement)
		}
		best := es[0]
		for _, e := range es[1:] {
			if javaCompare(e, best)*sign > 0 {
				best = e
			}
		}
		return best
	}
	def(c, "static <T> T max(Collection<T>)", func(_ *frame, _ val, a []val) val { return extreme(a, 1) })
	def(c, "static <T> T min(Collection<T>)", func(_ *frame, _ val, a []val) val { return extreme(a, -1) })
	def(c, "static int frequency(Collection<?>,Object)", func(fr *frame, _ val, a []val) val {
		n := 0
		for _, e := range elements(a[0]) {
			fr.work(1)
			if javaEquals(a[1], e) {
				n++
			}
		}
		return ival(int32(n))
	})
	def(c, "static <T> List<T> emptyList()", func(fr *frame, _ val, _ []val) val { return listOf(fr, clsList, nil, immutable) })
	def(c, "static <T> Set<T> emptySet()", func(*frame, val, []val) val {
		s := newMap(clsSet, true)
		s.fixed = immutable
		return refval(s)
	})
	def(c, "static <K,V> Map<K,V> emptyMap()", func(*frame, val, []val) val {
		m := newMap(clsMap, false)
		m.fixed = immutable
		return refval(m)
	})
	def(c, "static <T> List<T> singletonList(T)", func(fr *frame, _ val, a []val) val {
		return listOf(fr, clsList, a[:1], immutable)
	})
	def(c, "static <T> Set<T> singleton(T)", func(fr *frame, _ val, a []val) val {
		s := setOf(fr, clsLinkedHashSet, a[:1])
		s.cls, s.fixed = clsSet, immutable
		return refval(s)
	})
	def(c, "static <T> List<T> nCopies(int,T)", func(fr *frame, _ val, a []val) val {
		n := int(a[0].i())
		if n < 0 {
			throw(clsIllegalArgument, "List length = %d", n)
		}
		fr.alloc(valSize * n)
		es := make([]val, n)
		for i := range es {
			es[i] = a[1]
		}
		return refval(&jlist{cls: clsList, elems: es, fixed: immutable})
	})
	def(c, "static <T> List<T> unmodifiableList(List<T>)", func(fr *frame, _ val, a []val) val {
		return listOf(fr, clsList, elements(a[0]), immutable)
	})
	def(c, "static <T> Set<T> unmodifiableSet(Set<T>)", func(fr *frame, _ val, a []val) val {
		s := setOf(fr, clsLinkedHashSet, elements(a[0]))
		s.cls, s.fixed = clsSet, immutable
		return refval(s)
	})
	def(c, "static <T> boolean addAll(Collection<T>,T...)", func(fr *frame, _ val, a []val) val {
		changed := false
		for _, e := range elements(a[1]) {
			changed = collAdd(fr, a[0], e) || changed
		}
		return zval(changed)
	})
}

func declareArrays() {
	c := clsArrays
	def(c, "static <T> List<T> asList(T...)", func(fr *frame, _ val, a []val) val {
		return listOf(fr, clsList, elements(a[0]), fixedSize)
	})
	for _, p := range []string{"int", "long", "short", "byte", "char", "double", "float", "Object"} {
		p := p
		def(c, "static void sort("+p+"[])", func(_ *frame, _ val, a []val) val {
			vals := elements(a[0])
			pt := primTypes[p]
			sort.SliceStable(vals, func(i, j int) bool { return sortLess(pt, vals[i], vals[j]) })
			return null
		})
		def(c, "static String toString("+p+"[])", func(fr *frame, _ val, a []val) val {
			if a[0].r == nil {
				return strval("null")
			}
			vals := a[0].r.(*jarray).vals
			if pt := primTypes[p]; pt != nil {
				boxedVals := make([]val, len(vals))
				for i, v := range vals {
					boxedVals[i] = val{n: v.n, r: boxOf(pt).cls}
				}
				vals = boxedVals
			}
			return strval(toJavaString(fr, refval(&jlist{elems: vals})))
		})
	}
	objs := clsObjects
	def(objs, "static boolean equals(Object,Object)", func(_ *frame, _ val, a []val) val { return zval(javaEquals(a[0], a[1])) })
	def(objs, "static int hashCode(Object)", func(_ *frame, _ val, a []val) val { return ival(javaHash(a[0])) })
	def(objs, "static int hash(Object...)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			return ival(0)
		}
		return ival(javaHash(refval(&jlist{elems: elements(a[0])})))
	})
	def(objs, "static String toString(Object)", func(fr *frame, _ val, a []val) val { return strval(toJavaString(fr, a[0])) })
	def(objs, "static String toString(Object,String)", func(fr *frame, _ val, a []val) val {
		if a[0].r == nil {
			return a[1]
		}
		return strval(toJavaString(fr, a[0]))
	})
	def(objs, "static boolean isNull(Object)", func(_ *frame, _ val, a []val) val { return zval(a[0].r == nil) })
	def(objs, "static boolean nonNull(Object)", func(_ *frame, _ val, a []val) val { return zval(a[0].r != nil) })
	def(objs, "static <T> T requireNonNull(T)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return a[0]
	})
	def(objs, "static <T> T requireNonNull(T,String)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			if a[1].r == nil {
				npe()
			}
			throw(clsNPE, "%s", a[1].str())
		}
		return a[0]
	})
	def(objs, "static <T> T requireNonNullElse(T,T)", func(_ *frame, _ val, a []val) val {
		if a[0].r != nil {
			return a[0]
		}
		if a[1].r == nil {
			throw(clsNPE, "defaultObj")
		}
		return a[1]
	})
}

// sortLess orders array elements as Arrays.sort does: numbers by value
// (doubles by Double.compare), objects by their natural order.
func sortLess(pt *jtype, a, b val) bool {
	switch {
	case pt == nil:
		return javaCompare(a, b) < 0
	case pt.prim == pDouble || pt.prim == pFloat:
		return javaCompare(boxed(clsDouble, a.n), boxed(clsDouble, b.n)) < 0
	case pt.prim == pChar:
		return a.c() < b.c()
	}
	return a.j() < b.j()
}
